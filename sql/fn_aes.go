package sql

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

func init() {
	register(map[string]builtin{
		"aes_encrypt":     {minArgs: 2, maxArgs: 6, compile: compileAES},
		"aes_decrypt":     {minArgs: 2, maxArgs: 5, compile: compileAES},
		"try_aes_decrypt": {minArgs: 2, maxArgs: 5, compile: compileAES},
	})
}

// compileAES: aes_encrypt(input, key[, mode[, padding[, iv[, aad]]]]) and
// aes_decrypt(input, key[, mode[, padding[, aad]]]) as Spark 4 runs them:
// AES with a 16, 24 or 32 byte key, in GCM (the default: a 12-byte IV, the
// ciphertext, a 16-byte tag), CBC (a 16-byte IV, PKCS#5 padding) or ECB
// (PKCS#5 padding); an IV not given is random. A key of another length is
// INVALID_PARAMETER_VALUE.AES_KEY_LENGTH; input that does not decrypt is
// INVALID_PARAMETER_VALUE.AES_CRYPTO_ERROR (NULL from try_aes_decrypt).
// Mode and padding are string literals.
func compileAES(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	encrypt := name == "aes_encrypt"
	mode, padding := "GCM", "DEFAULT"
	for i, p := range []*string{&mode, &padding} {
		if len(e.Args) > 2+i {
			lit, ok := e.Args[2+i].(*syntax.Literal)
			if !ok || lit.Kind != syntax.StringLit {
				return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[2+i].Position(), "the mode and padding of %s must be string literals", name)
			}
			*p = strings.ToUpper(lit.Value)
		}
	}
	switch {
	case mode == "GCM" && (padding == "DEFAULT" || padding == "NONE"),
		(mode == "CBC" || mode == "ECB") && (padding == "DEFAULT" || padding == "PKCS"):
	default:
		return nil, exprErr(domain.CodeAESUnsupportedMode, e.Pos, "%s takes GCM with NONE padding, or CBC or ECB with PKCS padding, not %s with %s", name, mode, padding)
	}
	var args []node
	for i, x := range e.Args {
		if i == 2 || i == 3 {
			continue // mode and padding, read above
		}
		n, err := c.compile(x)
		if err != nil {
			return nil, err
		}
		if k := n.typ().Kind; k == domain.KindString || k == domain.KindNull {
			// a string's UTF-8 bytes, as CAST(s AS BINARY)
			n = &fnNode{args: []node{retype(n, domain.TypeString)}, t: domain.TypeBytes, body: func(out *domain.Column, a []*domain.Column) error {
				copy(out.Strs, a[0].Strs)
				return nil
			}}
		} else if k != domain.KindBytes {
			return nil, exprErr(domain.CodeDatatypeMismatch, x.Position(), "%s needs binary or string arguments, found %s", name, n.typ())
		}
		args = append(args, n)
	}
	try, pos := strings.HasPrefix(name, "try_"), e.Pos
	return &valuesNode{args: args, t: domain.TypeBytes, fails: true, row: func(a []domain.Value) (domain.Value, error) {
		if a[0].IsNull() || a[1].IsNull() {
			return domain.Null(), nil
		}
		block, err := aes.NewCipher(a[1].AsBytes())
		if err != nil {
			return domain.Value{}, exprErr(domain.CodeAESKeyLength, pos, "%s takes a key of 16, 24 or 32 bytes, not %d", name, len(a[1].AsBytes()))
		}
		var iv, aad []byte
		if encrypt && len(a) > 2 && !a[2].IsNull() {
			iv = a[2].AsBytes()
		}
		if last := len(a) - 1; (encrypt && len(a) > 3 || !encrypt && len(a) > 2) && !a[last].IsNull() {
			aad = a[last].AsBytes()
		}
		var out []byte
		if encrypt {
			out, err = aesEncrypt(block, mode, a[0].AsBytes(), iv, aad)
		} else {
			out, err = aesDecrypt(block, mode, a[0].AsBytes(), aad)
		}
		switch {
		case err == nil:
			return domain.Bytes(out), nil
		case try:
			return domain.Null(), nil
		}
		return domain.Value{}, exprErr(domain.CodeAESCryptoError, pos, "%s in %s: %v", name, mode, err)
	}}, nil
}

func aesEncrypt(block cipher.Block, mode string, in, iv, aad []byte) ([]byte, error) {
	switch mode {
	case "GCM":
		g, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		if iv == nil {
			iv = make([]byte, g.NonceSize())
			if _, err := rand.Read(iv); err != nil {
				return nil, err
			}
		} else if len(iv) != g.NonceSize() {
			return nil, errAES("GCM takes an IV of 12 bytes")
		}
		return g.Seal(bytes.Clone(iv), iv, in, aad), nil
	case "CBC":
		if iv == nil {
			iv = make([]byte, aes.BlockSize)
			if _, err := rand.Read(iv); err != nil {
				return nil, err
			}
		} else if len(iv) != aes.BlockSize {
			return nil, errAES("CBC takes an IV of 16 bytes")
		}
		p := pkcs5(in)
		out := append(bytes.Clone(iv), make([]byte, len(p))...)
		cipher.NewCBCEncrypter(block, iv).CryptBlocks(out[aes.BlockSize:], p)
		return out, nil
	}
	if iv != nil {
		return nil, errAES("ECB takes no IV")
	}
	p := pkcs5(in)
	out := make([]byte, len(p))
	for i := 0; i < len(p); i += aes.BlockSize {
		block.Encrypt(out[i:], p[i:])
	}
	return out, nil
}

func aesDecrypt(block cipher.Block, mode string, in, aad []byte) ([]byte, error) {
	switch mode {
	case "GCM":
		g, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		if len(in) < g.NonceSize()+g.Overhead() {
			return nil, errAES("the input is too short")
		}
		return g.Open(nil, in[:g.NonceSize()], in[g.NonceSize():], aad)
	case "CBC":
		if len(in) < 2*aes.BlockSize || len(in)%aes.BlockSize != 0 {
			return nil, errAES("the input is not whole blocks after its IV")
		}
		out := make([]byte, len(in)-aes.BlockSize)
		cipher.NewCBCDecrypter(block, in[:aes.BlockSize]).CryptBlocks(out, in[aes.BlockSize:])
		return unpkcs5(out)
	}
	if len(in) == 0 || len(in)%aes.BlockSize != 0 {
		return nil, errAES("the input is not whole blocks")
	}
	out := make([]byte, len(in))
	for i := 0; i < len(in); i += aes.BlockSize {
		block.Decrypt(out[i:], in[i:])
	}
	return unpkcs5(out)
}

type errAES string

func (e errAES) Error() string { return string(e) }

func pkcs5(p []byte) []byte {
	n := aes.BlockSize - len(p)%aes.BlockSize
	return append(bytes.Clone(p), bytes.Repeat([]byte{byte(n)}, n)...)
}

func unpkcs5(p []byte) ([]byte, error) {
	n := int(p[len(p)-1])
	if n == 0 || n > aes.BlockSize || n > len(p) || !bytes.Equal(p[len(p)-n:], bytes.Repeat([]byte{byte(n)}, n)) {
		return nil, errAES("the padding is not PKCS#5: wrong key, or damaged input")
	}
	return p[:len(p)-n], nil
}
