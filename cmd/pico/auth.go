package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/picomq/pico/adapters/adminclient"
	"github.com/picomq/pico/adapters/dsclient"
	"github.com/picomq/pico/adapters/picoclient"
)

const (
	authSynopsis = "pico auth login [--token TOKEN] | status | logout  [--profile NAME]"
	authNotes    = `commands:
  login    store a token for the profile, read from stdin (one line) or
           from --token, after checking its form. It goes to
           credentials.toml beside the config file (pico config path),
           which only you may read.
  status   print the profile, where its token comes from and the token's
           id, and ask the endpoint whether the token is valid (a Pico
           listing of one stream; with --protocol ds, a HEAD of /). Exits
           1 when it is not valid or the endpoint cannot be reached.
  logout   remove the token stored for the profile.

The profile is --profile, else PICO_PROFILE, else the default profile (pico
config use), else "default". Every other verb sends the first of --token,
PICO_TOKEN and the profile's stored token. Only a token's id is shown,
never its secret.
`
)

// authCommand is one pico auth invocation.
type authCommand struct {
	*command
	stdin          io.Reader
	stdout, stderr io.Writer
}

var authVerbs = map[string]func(*authCommand, context.Context) error{
	"login":  (*authCommand).login,
	"status": (*authCommand).status,
	"logout": (*authCommand).logout,
}

func runAuth(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c := &authCommand{command: newCommand("auth", authSynopsis), stdin: stdin, stdout: stdout, stderr: stderr}
	c.notes = authNotes
	positional, err := c.parse(args, 1, 1)
	if err != nil {
		return err
	}
	run, ok := authVerbs[positional[0]]
	switch {
	case !ok:
		return c.usageError(unknownIn("auth", positional[0], authVerbs))
	case c.given("token") && positional[0] == "logout":
		return c.usageError("logout takes no --token")
	}
	return run(c, ctx)
}

// maxTokenLine bounds the line login reads: a wire token is far shorter.
const maxTokenLine = 4096

// login stores the token for the profile. It does not ask the server:
// status does.
func (c *authCommand) login(context.Context) error {
	name, err := c.profileName()
	if err != nil {
		return err
	}
	if !profileName.MatchString(name) {
		return c.usageError(fmt.Sprintf("profile name %q: use letters, digits, - and _", name))
	}
	wire, source := c.globals.token, "--token"
	if !c.given("token") {
		if wire, err = c.readTokenLine(); err != nil {
			return err
		}
		source = "stdin"
	}
	cred, err := parseCredential(wire, source)
	if err != nil {
		return err
	}
	path, creds, err := openCredentials()
	if err != nil {
		return err
	}
	creds.Profiles[name] = storedCredential{Token: cred.wire}
	if err := creds.save(path); err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "stored token %s for profile %s in %s\n", cred.id, name, path)
	c.warnEnvToken()
	return nil
}

// readTokenLine reads the token from stdin's first line, prompting when
// stdin is a terminal.
func (c *authCommand) readTokenLine() (string, error) {
	if f, ok := c.stdin.(*os.File); ok {
		if info, err := f.Stat(); err == nil && info.Mode()&os.ModeCharDevice != 0 {
			fmt.Fprint(c.stderr, "token: ")
		}
	}
	line, err := bufio.NewReader(io.LimitReader(c.stdin, maxTokenLine)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading the token from stdin: %w", err)
	}
	if strings.TrimSpace(line) == "" {
		return "", errors.New("no token on stdin: pipe one in, or give --token")
	}
	return line, nil
}

// status prints what the verbs would send and whether the endpoint takes
// it; it fails when there is no token, the endpoint refuses it, or cannot
// be asked.
func (c *authCommand) status(ctx context.Context) error {
	name, err := c.profileName()
	if err != nil {
		return err
	}
	p, cred, err := c.connection()
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "profile\t%s\nendpoint\t%s (%s)\n", name, p.Endpoint, p.Protocol)
	if cred.wire == "" {
		w.Flush()
		return errors.New("no token: give --token, set PICO_TOKEN or run pico auth login")
	}
	fmt.Fprintf(w, "token\t%s (from %s)\n", cred.id, cred.source)
	verdict, err := verifyToken(ctx, p, cred)
	if err == nil {
		fmt.Fprintf(w, "valid\t%s\n", verdict)
	}
	if flushErr := w.Flush(); err == nil {
		err = flushErr
	}
	return err
}

// verifyToken asks the endpoint with a request that only an invalid
// credential is refused with 401: any other answer, 403 included, means
// the endpoint knows the token.
func verifyToken(ctx context.Context, p profile, cred credential) (string, error) {
	var err error
	op := "list"
	if p.Protocol == "ds" {
		op = "head on /"
		_, err = dsclient.New(p.Endpoint, dsclient.Options(clientOptions(p, cred))).Head(ctx, "/")
	} else {
		_, err = picoclient.New(p.Endpoint, clientOptions(p, cred)).List(ctx, "", "", 1)
	}
	switch status := httpStatus(err); {
	case err == nil:
		return "yes", nil
	case status == http.StatusUnauthorized:
		return "", fmt.Errorf("token %s is not valid at %s: unknown, revoked or expired (401)", cred.id, p.Endpoint)
	case status == http.StatusForbidden:
		return fmt.Sprintf("yes, but it does not grant %s (403)", op), nil
	case status != 0:
		return fmt.Sprintf("yes (the endpoint answered %d)", status), nil
	}
	return "", fmt.Errorf("could not check the token at %s: %w", p.Endpoint, err)
}

func (c *authCommand) logout(context.Context) error {
	name, err := c.profileName()
	if err != nil {
		return err
	}
	path, creds, err := openCredentials()
	if err != nil {
		return err
	}
	if _, ok := creds.Profiles[name]; !ok {
		fmt.Fprintf(c.stderr, "no token stored for profile %s\n", name)
	} else {
		delete(creds.Profiles, name)
		if err := creds.save(path); err != nil {
			return err
		}
		fmt.Fprintf(c.stderr, "removed the token of profile %s from %s\n", name, path)
	}
	c.warnEnvToken()
	return nil
}

// warnEnvToken says that PICO_TOKEN, when set, goes before any stored token.
func (c *authCommand) warnEnvToken() {
	if os.Getenv(tokenEnv) != "" {
		fmt.Fprintf(c.stderr, "note: %s is set, and the verbs send it instead\n", tokenEnv)
	}
}

// httpStatus is the status of a client's error answer; 0 when err is no
// answer.
func httpStatus(err error) int {
	var pico *picoclient.APIError
	var ds *dsclient.Error
	var admin *adminclient.Error
	switch {
	case errors.As(err, &pico):
		return pico.Status
	case errors.As(err, &ds):
		return ds.Status
	case errors.As(err, &admin):
		return admin.Status
	}
	return 0
}
