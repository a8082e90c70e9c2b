package main

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"text/tabwriter"
	"text/template"

	"github.com/kelseyhightower/envconfig"
)

// printConfig is `h9 config`: every setting with its default and the
// value in effect, secrets redacted. It prints even an invalid
// configuration (that is when it is read), then fails as h9 would (exit
// 2) with the line saying what h9 refuses.
func printConfig(stdout io.Writer) error {
	c, err := processForPrinting()
	if err != nil {
		return err
	}
	rows, err := settingRows(&c)
	if err != nil {
		return err
	}
	sc := secretsOf(c)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VARIABLE\tDEFAULT\tIN EFFECT")
	for _, r := range rows {
		shown, _ := sc.scrub(r.value)
		switch {
		case r.value == "":
			shown = "(empty)"
		case r.name == "H9_DATABASE_URL":
			shown = redactedURL(r.value)
		case slices.Contains(secretSettings, r.name):
			shown = redacted // whatever its length: the scrubber leaves short values alone
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.name, r.def, shown)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := c.validate(); err != nil {
		return fmt.Errorf("%w: h9 would refuse to start with this configuration", err)
	}
	return nil
}

// secretSettings are the settings that are secrets as a whole, shown
// redacted by h9 config.
var secretSettings = []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "OPENAI_API_KEY",
	"H9_GITHUB_TOKEN", "H9_GITLAB_TOKEN", "H9_GITEA_TOKEN"}

// processForPrinting reads the environment as loadConfig does, but a
// missing required setting reads as empty instead of stopping the read
// (validate names it afterwards). The variables it sets for that are
// unset again before it returns.
func processForPrinting() (Config, error) {
	var placeholders []string
	defer func() {
		for _, k := range placeholders {
			os.Unsetenv(k)
		}
	}()
	for range 8 {
		var c Config
		err := envconfig.Process(envPrefix, &c)
		key, missing := strings.CutPrefix(fmt.Sprint(err), "required key ")
		if err == nil || !missing {
			return c, explainEnvErrorOrNil(err)
		}
		key = strings.TrimSuffix(key, " missing value")
		placeholders = append(placeholders, key)
		os.Setenv(key, "")
	}
	return Config{}, invalid("cannot read the configuration")
}

func explainEnvErrorOrNil(err error) error {
	if err == nil {
		return nil
	}
	return explainEnvError(err)
}

// settingValue is a field as its variable would be written.
func settingValue(v reflect.Value) string {
	if v.Kind() == reflect.Slice {
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = fmt.Sprint(v.Index(i).Interface())
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v.Interface())
}

// redactedURL keeps a database URL readable with its password hidden.
func redactedURL(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return redacted
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return strings.Replace(u.String(), ":xxxxx@", ":"+redacted+"@", 1)
}

type settingRow struct {
	name, value string
	def         string // as h9 -h shows it: the default, (required) or (empty)
}

// settingRows walks the settings as envconfig sees them (names, fields,
// default tags); its walk is reached through a usage template, the only
// way envconfig exposes it.
func settingRows(c *Config) ([]settingRow, error) {
	var rows []settingRow
	add := func(key, alt string, field reflect.Value, def, req string) string {
		name := key
		if alt != "" {
			name = alt
		}
		v := settingValue(field)
		shownDef := def
		switch {
		case req == "true":
			shownDef = "(required)"
		case def == "":
			shownDef = "(empty)"
		}
		rows = append(rows, settingRow{name: name, value: v, def: shownDef})
		return ""
	}
	tmpl, err := template.New("rows").Funcs(template.FuncMap{"row": add}).
		Parse(`{{range .}}{{row .Key .Alt .Field (.Tags.Get "default") (.Tags.Get "required")}}{{end}}`)
	if err != nil {
		return nil, err
	}
	if err := envconfig.Usaget(envPrefix, c, io.Discard, tmpl); err != nil {
		return nil, err
	}
	return rows, nil
}
