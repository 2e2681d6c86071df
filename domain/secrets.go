package domain

import (
	"os"
	"regexp"
	"strings"
)

// secretRef is ${env:NAME} in a connector option: a secret the option
// names and the environment holds, never written where the option is
// shown (events, logs, messages), which show the reference.
var secretRef = regexp.MustCompile(`\$\{\s*env:([A-Za-z_][A-Za-z0-9_]*)\s*\}`)

// ResolveSecrets replaces each ${env:NAME} of value with the environment
// variable NAME; an unset one is SECRET_NOT_SET, naming the variable and
// not the value.
func ResolveSecrets(value string) (string, error) {
	if !strings.Contains(value, "${") {
		return value, nil
	}
	var missing string
	out := secretRef.ReplaceAllStringFunc(value, func(ref string) string {
		name := secretRef.FindStringSubmatch(ref)[1]
		v, ok := os.LookupEnv(name)
		if !ok && missing == "" {
			missing = name
		}
		return v
	})
	if missing != "" {
		return "", Errorf(CodeSecretNotSet, "the environment variable %s, which an option names as ${env:%s}, is not set", missing, missing).
			WithHint("set " + missing + " in the environment of the process that runs the pipeline")
	}
	return out, nil
}
