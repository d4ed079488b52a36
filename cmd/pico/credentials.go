package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/picomq/pico/domain"
)

// tokenEnv is the token's environment variable (the --token flag's).
const tokenEnv = "PICO_TOKEN"

// defaultProfileName names the profile a token is stored for when no
// profile is named and the config file has no default.
const defaultProfileName = "default"

// credential is the bearer token a command sends, and where it came from.
// Only the id is ever shown: the wire form holds the secret.
type credential struct {
	wire   string // "" sends no credential
	id     string
	source string // "--token", "PICO_TOKEN", "stdin" or the file it is stored in
}

// credential resolves the token from the first of: --token, PICO_TOKEN,
// the token stored for the current profile; none when there is none. A
// token that does not parse fails the command before any request.
func (c *command) credential() (credential, error) {
	if c.given("token") {
		return parseCredential(c.globals.token, "--token")
	}
	if env := os.Getenv(tokenEnv); env != "" {
		return parseCredential(env, tokenEnv)
	}
	name, err := c.profileName()
	if err != nil {
		return credential{}, err
	}
	path, err := credentialsPath()
	if err != nil {
		return credential{}, nil // no config directory: nothing stored either
	}
	creds, err := loadCredentials(path)
	if err != nil {
		return credential{}, err
	}
	stored, ok := creds.Profiles[name]
	if !ok {
		return credential{}, nil
	}
	return parseCredential(stored.Token, path)
}

// parseCredential checks a wire token's form. The error names the source,
// never the token.
func parseCredential(wire, source string) (credential, error) {
	wire = strings.TrimSpace(wire)
	parsed, err := domain.ParseToken(wire)
	if err != nil {
		return credential{}, fmt.Errorf("the token from %s: %v", source, err)
	}
	return credential{wire: wire, id: parsed.ID, source: source}, nil
}

// profileName is the current profile: --profile, else PICO_PROFILE, else
// the config file's default, else "default".
func (c *command) profileName() (string, error) {
	name := os.Getenv(globalEnv["profile"])
	if c.given("profile") {
		name = c.globals.profile
	}
	if name != "" {
		return name, nil
	}
	path, err := configPath()
	if err != nil {
		return defaultProfileName, nil
	}
	cfg, err := loadConfig(path)
	if err != nil {
		return "", err
	}
	if cfg.DefaultProfile != "" {
		return cfg.DefaultProfile, nil
	}
	return defaultProfileName, nil
}

// credentialsFile holds the stored tokens, one per profile. It lives beside
// the config file, apart from it, so that the config can be shown and
// shared without the secrets.
type credentialsFile struct {
	Profiles map[string]storedCredential `toml:"profiles,omitempty"`
}

type storedCredential struct {
	Token string `toml:"token"`
}

// credentialsPath is credentials.toml in the config file's directory.
func credentialsPath() (string, error) {
	path, err := configPath()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(path), "credentials.toml"), nil
}

// openCredentials loads the credentials file at its usual path.
func openCredentials() (string, *credentialsFile, error) {
	path, err := credentialsPath()
	if err != nil {
		return "", nil, err
	}
	creds, err := loadCredentials(path)
	return path, creds, err
}

// loadCredentials reads the file; a missing file stores nothing. Its
// errors say where, never what: the file holds secrets.
func loadCredentials(path string) (*credentialsFile, error) {
	creds := &credentialsFile{}
	md, err := toml.DecodeFile(path, creds)
	var parseErr toml.ParseError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		err = nil
	case errors.As(err, &parseErr):
		return nil, fmt.Errorf("credentials %s: not valid TOML at line %d", path, parseErr.Position.Line)
	case err != nil:
		return nil, fmt.Errorf("credentials %s: want [profiles.NAME] tables holding token = \"TOKEN\"", path)
	}
	if keys := md.Undecoded(); len(keys) > 0 {
		return nil, fmt.Errorf("credentials %s: unknown key %s", path, keys[0])
	}
	if creds.Profiles == nil {
		creds.Profiles = map[string]storedCredential{}
	}
	return creds, nil
}

// save writes the file atomically, readable by its owner only; a file left
// with no token is removed.
func (creds *credentialsFile) save(path string) error {
	if len(creds.Profiles) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(creds); err != nil {
		return err
	}
	return writePrivateFile(path, buf.Bytes())
}
