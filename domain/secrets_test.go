package domain

import (
	"errors"
	"strings"
	"testing"
)

func TestResolveSecrets(t *testing.T) {
	t.Setenv("SLUICE_TEST_TOKEN", "s3cr3t")
	for _, c := range []struct{ in, want string }{
		{"plain", "plain"},
		{"${env:SLUICE_TEST_TOKEN}", "s3cr3t"},
		{"user:${ env:SLUICE_TEST_TOKEN }@host", "user:s3cr3t@host"},
		{"${config.key}", "${config.key}"}, // not a secret reference: left as it is
	} {
		got, err := ResolveSecrets(c.in)
		if err != nil || got != c.want {
			t.Errorf("ResolveSecrets(%q) = %q, %v, want %q", c.in, got, err, c.want)
		}
	}
	_, err := ResolveSecrets("${env:SLUICE_TEST_UNSET_VARIABLE}")
	var de *Error
	if !errors.As(err, &de) || de.Code != CodeSecretNotSet || !strings.Contains(err.Error(), "SLUICE_TEST_UNSET_VARIABLE") {
		t.Errorf("an unset variable: %v", err)
	}
}
