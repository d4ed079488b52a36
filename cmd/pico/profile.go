package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// profile is a saved set of global settings. Unset fields fall through to
// the next layer (see command.settings).
type profile struct {
	Endpoint string `toml:"endpoint,omitempty"`
	Protocol string `toml:"protocol,omitempty"`
	HTTP2    *bool  `toml:"http2,omitempty"`
}

// over fills p's unset fields from q.
func (p profile) over(q profile) profile {
	if p.Endpoint == "" {
		p.Endpoint = q.Endpoint
	}
	if p.Protocol == "" {
		p.Protocol = q.Protocol
	}
	if p.HTTP2 == nil {
		p.HTTP2 = q.HTTP2
	}
	return p
}

func (p profile) complete() bool { return p.Endpoint != "" && p.Protocol != "" && p.HTTP2 != nil }

func (p profile) validate() error {
	if p.Endpoint != "" {
		if err := validateEndpoint(p.Endpoint); err != nil {
			return err
		}
	}
	if p.Protocol != "" {
		return validateProtocol(p.Protocol)
	}
	return nil
}

// String is the profile's set fields as key=value pairs.
func (p profile) String() string {
	var parts []string
	if p.Endpoint != "" {
		parts = append(parts, "endpoint="+p.Endpoint)
	}
	if p.Protocol != "" {
		parts = append(parts, "protocol="+p.Protocol)
	}
	if p.HTTP2 != nil {
		parts = append(parts, fmt.Sprintf("http2=%t", *p.HTTP2))
	}
	return strings.Join(parts, " ")
}

// configFile is the TOML file holding the profiles.
type configFile struct {
	DefaultProfile string             `toml:"default_profile,omitempty"`
	Profiles       map[string]profile `toml:"profiles,omitempty"`
}

// configPath is $PICO_CONFIG, else pico/config.toml in the user's config
// directory.
func configPath() (string, error) {
	if path := os.Getenv("PICO_CONFIG"); path != "" {
		return path, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no config directory (set PICO_CONFIG): %w", err)
	}
	return filepath.Join(dir, "pico", "config.toml"), nil
}

// loadConfig reads the file; a missing file holds no profiles. Unknown keys
// are rejected so that a typo does not silently drop a setting.
func loadConfig(path string) (*configFile, error) {
	cfg := &configFile{}
	md, err := toml.DecodeFile(path, cfg)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if keys := md.Undecoded(); len(keys) > 0 {
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = k.String()
		}
		return nil, fmt.Errorf("config %s: unknown keys: %s", path, strings.Join(names, ", "))
	}
	if cfg.Profiles == nil {
		cfg.Profiles = map[string]profile{}
	}
	return cfg, nil
}

// save writes the file atomically, readable by its owner only.
func (cfg *configFile) save(path string) error {
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(cfg); err != nil {
		return err
	}
	return writePrivateFile(path, buf.Bytes())
}

// writePrivateFile replaces path with data atomically (a temporary file
// beside it, then a rename), readable by its owner only, creating the
// directory for the owner only when it is missing.
func writePrivateFile(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// profileNames lists the profiles in name order.
func (cfg *configFile) profileNames() []string {
	names := make([]string, 0, len(cfg.Profiles))
	for name := range cfg.Profiles {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// savedProfile returns the named profile, or the default one when name is
// empty (an empty profile when there is none). A named profile that does
// not exist is an error.
func savedProfile(name string) (profile, error) {
	path, err := configPath()
	if err != nil && name == "" {
		return profile{}, nil // no config directory: no default profile either
	}
	if err != nil {
		return profile{}, err
	}
	cfg, err := loadConfig(path)
	if err != nil {
		return profile{}, err
	}
	if name == "" {
		name = cfg.DefaultProfile
	}
	if name == "" {
		return profile{}, nil
	}
	p, ok := cfg.Profiles[name]
	if !ok {
		return profile{}, fmt.Errorf("profile %q not found in %s", name, path)
	}
	if err := p.validate(); err != nil {
		return profile{}, fmt.Errorf("profile %q: %w", name, err)
	}
	return p, nil
}
