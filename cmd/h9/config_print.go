package main

import (
	"fmt"
	"io"
	"net/url"
	"reflect"
	"strings"
	"text/tabwriter"
	"text/template"
	"time"

	"github.com/kelseyhightower/envconfig"
)

// printConfig is `h9 config`: every setting with the value in effect,
// secrets redacted, then whether the whole configuration would start h9.
// It prints even an invalid configuration, since that is when it is read.
func printConfig(stdout io.Writer) error {
	var c Config
	if err := envconfig.Process(envPrefix, &c); err != nil {
		return explainEnvError(err)
	}
	rows, err := settingRows(&c)
	if err != nil {
		return err
	}
	sc := secretsOf(c)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VARIABLE\tVALUE\t")
	for _, r := range rows {
		shown, redactedAll := sc.scrub(r.value)
		if r.name == "H9_DATABASE_URL" && redactedAll {
			shown = redactedURL(r.value)
		}
		if r.value == "" {
			shown = "(empty)"
		}
		note := ""
		if r.isDefault {
			note = "(default)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.name, shown, note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return c.validate()
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

// defaultValue is the default tag written as settingValue writes the
// field (2m is 2m0s once parsed).
func defaultValue(field reflect.Value, def string) string {
	if field.Type() == reflect.TypeFor[time.Duration]() {
		if d, err := time.ParseDuration(def); err == nil {
			return d.String()
		}
	}
	return def
}

type settingRow struct {
	name, value string
	isDefault   bool
}

// settingRows walks the settings as envconfig sees them (names, fields,
// default tags); its walk is reached through a usage template, the only
// way envconfig exposes it.
func settingRows(c *Config) ([]settingRow, error) {
	var rows []settingRow
	add := func(key, alt string, field reflect.Value, def string) string {
		name := key
		if alt != "" {
			name = alt
		}
		v := settingValue(field)
		rows = append(rows, settingRow{name: name, value: v, isDefault: v == defaultValue(field, def)})
		return ""
	}
	tmpl, err := template.New("rows").Funcs(template.FuncMap{"row": add}).
		Parse(`{{range .}}{{row .Key .Alt .Field (.Tags.Get "default")}}{{end}}`)
	if err != nil {
		return nil, err
	}
	if err := envconfig.Usaget(envPrefix, c, io.Discard, tmpl); err != nil {
		return nil, err
	}
	return rows, nil
}
