package console_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

// TestCrawlEveryLink logs in and follows every link, stylesheet, script and GET form (with
// the values it shows) the console renders, from the home page on, with timers of tenants and
// of an app, errored executions and a log long enough for a second page; every page must
// answer below 400 and, being signed in, show the whole navigation bar. Links to the timers
// of other tests (the stack is shared) are not followed.
func TestCrawlEveryLink(t *testing.T) {
	t.Parallel()
	f := setup(t)
	app := f.prefix + "-app"
	now := time.Now().UTC().Truncate(time.Millisecond)
	var keys []timer.Key
	for _, c := range []struct{ name, app, tenant string }{
		{"Plain", "", ""}, {"Report", "", "acme"}, {"Sync", app, ""}, {"Bill", app, "globex"}, {"Off", "", ""},
	} {
		keys = append(keys, f.createIn(t, c.app, c.tenant, c.name, "every 5m", func(in *timer.Instance) { in.Active = c.name != "Off" }))
	}
	for i, k := range keys {
		f.logEntry(t, k, fmt.Sprintf("ok-%d", i), now.Add(-time.Duration(i+1)*time.Minute), timer.OutcomeSuccess, "")
		f.logEntry(t, k, fmt.Sprintf("err-%d", i), now.Add(-time.Duration(i+1)*time.Minute-time.Second), timer.OutcomeError,
			"HTTP 500 from http://127.0.0.1:9/x: <b>boom</b> & more: "+strings.Repeat("a long error line ", 20))
	}
	// More than a page (50) for one timer: its log has an "older →" link.
	for i := range 55 {
		f.logEntry(t, keys[1], fmt.Sprintf("many-%d", i), now.Add(-time.Hour-time.Duration(i)*time.Second), timer.OutcomeSuccess, "")
	}

	b := f.login(t)
	mine := func(u *url.URL) bool {
		for _, v := range []string{u.Query().Get("timer"), u.Query().Get("app"), strings.TrimPrefix(u.Path, "/timers/")} {
			if v != "" && v != u.Path && v != "/timers" && !strings.Contains(v, f.prefix) {
				return false
			}
		}
		return true
	}
	seen := map[string]bool{}
	queue := []string{"/"}
	var pages, olders, entries int
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		if seen[path] {
			continue
		}
		seen[path] = true
		status, body, hdr := b.send(t, "GET", path, nil, "")
		require.Less(t, status, 400, "GET %s answered %d:\n%s", path, status, body)
		if !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
			continue
		}
		pages++
		nav := navBar.FindString(body)
		for _, want := range []string{`href="/"`, `href="/timers"`, `href="/logs"`} {
			require.Contains(t, nav, want, "the navigation bar of %s", path)
		}
		for _, l := range renderedLinks(body) {
			u, err := url.Parse(l)
			require.NoError(t, err, "a link on %s", path)
			require.Empty(t, u.Host, "an absolute link on %s: %s", path, l)
			if !mine(u) {
				continue
			}
			if u.Query().Get("after") != "" {
				olders++
			}
			if u.Path == "/logs/entry" {
				entries++
			}
			queue = append(queue, u.RequestURI())
		}
	}
	t.Logf("crawled %d pages, %d links in all", pages, len(seen))
	require.Positive(t, olders, "a second log page was linked")
	require.Positive(t, entries, "log entries were linked")
	for _, k := range keys {
		require.True(t, seen["/timers/"+url.PathEscape(k.String())], "%s's page was reached", k)
	}
	require.True(t, seen["/logs?timer="+url.QueryEscape(keys[1].String())], "a tenant timer's Log button was followed")

	// An error page (400) keeps the navigation bar, with the Timers log.
	status, body, _ := b.send(t, "GET", "/logs?timer=no%20such", nil, "")
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, navBar.FindString(body), `href="/logs"`)
}

var (
	navBar = regexp.MustCompile(`(?s)<nav>.*?</nav>`)
	tagRe  = regexp.MustCompile(`(?s)<(/?)(a|link|script|form|input|select|option)\b([^>]*)>`)
	attrRe = regexp.MustCompile(`([a-zA-Z-]+)(?:="([^"]*)")?`)
)

// renderedLinks are the URLs a browser would GET from a page: every a href, stylesheet and
// script, and each GET form submitted with the values it shows. html/template quotes every
// attribute with ", so these patterns read what the console renders.
func renderedLinks(body string) []string {
	var out []string
	var form *url.Values
	var action, selectName string
	for _, m := range tagRe.FindAllStringSubmatch(body, -1) {
		closing, tag, attrs := m[1] == "/", m[2], map[string]string{}
		for _, a := range attrRe.FindAllStringSubmatch(m[3], -1) {
			attrs[strings.ToLower(a[1])] = html.UnescapeString(a[2])
		}
		_, has := attrs["checked"]
		_, selected := attrs["selected"]
		switch {
		case tag == "form" && closing && form != nil:
			out = append(out, action+"?"+form.Encode())
			form = nil
		case tag == "form" && !closing && strings.EqualFold(attrs["method"], "get"):
			form, action = &url.Values{}, attrs["action"]
		case tag == "input" && form != nil && attrs["name"] != "":
			if attrs["type"] == "checkbox" && !has {
				continue
			}
			v := attrs["value"]
			if attrs["type"] == "checkbox" && v == "" {
				v = "on"
			}
			form.Set(attrs["name"], v)
		case tag == "select" && form != nil && !closing:
			selectName = attrs["name"]
		case tag == "option" && form != nil && selectName != "" && selected:
			form.Set(selectName, attrs["value"])
		case tag == "a" && !closing && attrs["href"] != "":
			out = append(out, attrs["href"])
		case tag == "link" && attrs["href"] != "", tag == "script" && attrs["src"] != "":
			out = append(out, attrs["href"]+attrs["src"])
		}
	}
	return out
}
