// Package redact removes what is personal from a result before it leaves
// the machine: host names, IP and MAC addresses, serial numbers and UUIDs of
// hardware, user names, paths and credentials. It works on the document as
// JSON, so fields added later are scrubbed too.
//
// A path (absolute, or starting with ~/, ./ or ../) is dropped wherever it
// stands, in a field of its own or in free text: a file keeps its base name
// ("(redacted)/custom.sql"), a directory becomes the mask. What is the same
// on every machine stays: "/", the kernel's /proc and /sys, and a device
// (/dev/NAME, /dev/mapper/NAME), which the disks' facts name anyway.
package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/secret"
	"github.com/dbmark/dbmark/internal/target"
)

// Mask replaces what was removed.
const Mask = "(redacted)"

// personalKeys are fields and settings whose whole value is personal,
// matched by their lowercased name.
var personalKeys = map[string]bool{
	"hostname": true, "host": true, "report_host": true, "wsrep_node_name": true, "wsrep_node_address": true,
	"cluster_name": true, "server_uuid": true, "server_id": true, "bind_address": true, "listen_addresses": true,
	"product_serial": true, "board_serial": true, "chassis_serial": true, "product_uuid": true, "serial": true,
	"uuid": true, "user": true, "current_user": true, "session_user": true, "session_authorization": true,
	"krb_server_keyfile": true, "ssl_key": true, "ssl_cert": true, "ssl_ca": true, "ssl_key_file": true,
	"ssl_cert_file": true, "ssl_ca_file": true, "password": true, "secret": true, "token": true,
}

var (
	ipv4 = regexp.MustCompile(`\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b`)
	ipv6 = regexp.MustCompile(`(?i)\b(?:[0-9a-f]{1,4}:){2,7}[0-9a-f]{1,4}\b|(?i)\b(?:[0-9a-f]{1,4}:){1,6}:(?:[0-9a-f]{1,4})?\b|::1\b`)
	mac  = regexp.MustCompile(`(?i)\b[0-9a-f]{2}(?::[0-9a-f]{2}){5}\b`)
	uuid = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	home = regexp.MustCompile(`(/home/|/Users/|/var/home/)[^/\s"':,;]+`)
	// winHome is a Windows profile's directory, C:\Users\NAME (or with
	// slashes, or without the drive).
	winHome = regexp.MustCompile(`(?i)((?:\b[A-Z]:)?\\+(?:Users|Documents and Settings)\\+|\b[A-Z]:/+(?:Users|Documents and Settings)/+)[^\\/\s"':,;]+`)
	root    = regexp.MustCompile(`/root\b`)
	email   = regexp.MustCompile(`\b[\w.+-]+@[\w-]+\.[\w.-]+\b`)
	urlRE   = regexp.MustCompile(`\b[a-z][a-z0-9+.-]*://[^\s"']+`)
	// pathRE finds a path where a word may start (group 1 is what precedes
	// it): it runs to a space, a quote, a bracket, a comma or a semicolon.
	pathRE = regexp.MustCompile("(^|[\\s=:\"'(\\[{,])((?:~|\\.{1,2})?/[^\\s\"'`()\\[\\]{}<>,;]*)")
	// fileName is a base name with an extension (mine.sql, mine.sql@2,
	// pg_hba.conf): a file's name, kept; a directory's name is not.
	fileName = regexp.MustCompile(`^[^.]+\.[A-Za-z0-9]`)
	// kernelPath is a path that is the same on every machine.
	kernelPath = regexp.MustCompile(`^(/proc/|/sys/|/dev/[^/]+$|/dev/mapper/[^/]+$)`)
)

// Result returns a redacted copy of r; r is unchanged.
func Result(r *result.Result) (*result.Result, error) {
	s := &scrubber{literals: literals(r)}
	return through(r, func(doc any) any { return s.value("", doc) })
}

// Secrets returns r as JSON with its secrets masked by the secret policy
// (secret.Mask), and nothing else changed: what the results store keeps of
// a result or a sweep. Host and user names and paths stay; they leave the
// machine only through Result and Sweep.
func Secrets(v any) ([]byte, error) {
	doc, err := decodedNumbers(v)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(walk("", doc, func(key, s string) string {
		if secret.Secret(key, s) && !data(key, s) {
			return secret.Mask
		}
		return secret.Text(s)
	}))
	if err != nil {
		return nil, fmt.Errorf("redact: %w", err)
	}
	return b, nil
}

// through is a copy of v, a value that encodes as JSON, changed by fn on
// its JSON document.
func through[T any](v *T, fn func(any) any) (*T, error) {
	doc, err := decodedNumbers(v)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(fn(doc))
	if err != nil {
		return nil, fmt.Errorf("redact: %w", err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("redact: %w", err)
	}
	return &out, nil
}

// decodedNumbers is v through JSON, its numbers kept as json.Number:
// through float64 a 64-bit seed loses digits.
func decodedNumbers(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("redact: %w", err)
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("redact: %w", err)
	}
	return doc, nil
}

// walk replaces each string of a decoded JSON document with fn(key, s),
// key being the name of the field that holds it (or holds its list).
func walk(key string, v any, fn func(key, s string) string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = walk(k, e, fn)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = walk(key, e, fn)
		}
		return x
	case string:
		return fn(key, x)
	}
	return v
}

// base64Text is what an encoded histogram is made of.
var base64Text = regexp.MustCompile(`^[A-Za-z0-9+/]*={0,2}$`)

// data says whether s, under key, is data rather than text: the run's own
// identity, or an encoded histogram, whose letters could take the shape of
// a key by chance and must not be changed.
func data(key, s string) bool {
	return key == "id" || key == "encoded" && base64Text.MatchString(s)
}

// literals are the personal words the document itself reveals, removed
// wherever else they appear: the host name (and its short form) and the
// user names in the target's URL.
func literals(r *result.Result) []string {
	var out []string
	if r.Environment != nil && r.Environment.Hostname != "" {
		h := r.Environment.Hostname
		out = append(out, h)
		if short, _, ok := strings.Cut(h, "."); ok && len(short) > 2 {
			out = append(out, short)
		}
	}
	urls := []string{r.Target.URL}
	for _, sv := range r.Servers { // a cluster's other nodes
		urls = append(urls, sv.Target.URL)
	}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			continue
		}
		if name := u.User.Username(); len(name) > 2 && !serviceAccounts[strings.ToLower(name)] && !slices.Contains(out, name) {
			out = append(out, name)
		}
		if h := u.Hostname(); h != "" && h != "localhost" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	// Longest first, so a short form does not break a long one.
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// serviceAccounts are the user names engines and their packages create,
// which name no person: taken out of every text, they would take the
// target's kind ("postgres"), its scheme and its settings with them.
var serviceAccounts = map[string]bool{"postgres": true, "root": true, "mysql": true, "mariadb": true, "admin": true, "sa": true}

type scrubber struct{ literals []string }

func (s *scrubber) value(key string, v any) any {
	return walk(key, v, func(key, x string) string {
		if data(key, x) {
			return x // the run's own random identity, needed to refer to it; a histogram
		}
		if x != "" && personalKeys[strings.ToLower(key)] || secret.Secret(key, x) {
			return Mask
		}
		return s.String(x)
	})
}

// patternChars are the characters one of which every pattern above needs
// (a dot, a colon, a slash, @, = or a dash), but for the keys of a
// well-known format, which secret.May finds: text with none of them can
// hold only the literals, and skips the regular expressions.
const patternChars = ".:/@=-"

// String removes personal data from free text.
func (s *scrubber) String(v string) string {
	if !strings.ContainsAny(v, patternChars) && !secret.May(v) {
		for _, l := range s.literals {
			v = replaceWord(v, l)
		}
		return v
	}
	for _, r := range rules {
		if r.may(v) {
			v = r.apply(v)
		}
	}
	for _, l := range s.literals {
		v = replaceWord(v, l)
	}
	return v
}

// outsideURLs applies fn to the parts of v that are not URLs (a URL's path
// is not a file's unless its scheme says so: redactURL decides).
func outsideURLs(v string, fn func(string) string) string {
	locs := urlRE.FindAllStringIndex(v, -1)
	if locs == nil {
		return fn(v)
	}
	var b strings.Builder
	at := 0
	for _, l := range locs {
		b.WriteString(fn(v[at:l[0]]))
		b.WriteString(v[l[0]:l[1]])
		at = l[1]
	}
	b.WriteString(fn(v[at:]))
	return b.String()
}

// Path redacts a whole path: a file keeps its base name under the mask
// ("(redacted)/mine.sql"), a directory becomes the mask. The root, a
// one-letter name (the unit "/s"), the kernel's paths and a path redacted
// before are left as they are.
func Path(p string) string {
	rest := strings.TrimLeft(strings.TrimPrefix(p, "~"), "./")
	if len(rest) <= 1 && !strings.Contains(p, "~") || kernelPath.MatchString(p) || strings.Contains(p, Mask) {
		return p
	}
	if base := path.Base(p); fileName.MatchString(base) {
		return Mask + "/" + base
	}
	return Mask
}

// Text removes personal data from a piece of text by the rules of Result,
// without the words a result itself reveals (its host and user names).
func Text(v string) string { return (&scrubber{}).String(v) }

// rule is one pattern's replacement (re is nil for a rule of several
// patterns) and a test that is false only for text the rule cannot change: the characters or words each match must
// hold. Most strings of a result (times, versions, settings, base64
// histograms) pass none, and a test is far cheaper than the pattern (which
// made the site's check of a submission cost milliseconds).
type rule struct {
	re    *regexp.Regexp
	may   func(string) bool
	apply func(string) string
}

// rules are applied in this order, each to the previous one's output.
var rules = []rule{
	{urlRE, func(v string) bool { return strings.Contains(v, "://") }, func(v string) string { return urlRE.ReplaceAllStringFunc(v, redactURL) }},
	// Every secret, by the one policy (secret.Scrub): key=value, command
	// lines, DSNs, key formats, private keys.
	{nil, secret.May, func(v string) string { return secret.Scrub(v, Mask) }},
	{email, func(v string) bool { return strings.Contains(v, "@") }, func(v string) string { return email.ReplaceAllString(v, Mask) }},
	{uuid, func(v string) bool { return strings.Count(v, "-") >= 4 }, func(v string) string { return uuid.ReplaceAllString(v, Mask) }},
	{mac, func(v string) bool { return strings.Count(v, ":") >= 5 }, func(v string) string { return mac.ReplaceAllString(v, Mask) }},
	{ipv4, func(v string) bool { return strings.Count(v, ".") >= 3 }, func(v string) string { return ipv4.ReplaceAllString(v, Mask) }},
	// Every form of the IPv6 pattern holds two colons.
	{ipv6, func(v string) bool { return strings.Count(v, ":") >= 2 }, func(v string) string {
		return ipv6.ReplaceAllStringFunc(v, func(m string) string {
			// An address has all eight groups or "::" for those left
			// out; anything else is a time (12:30:45), a ratio or a
			// range (sweep's FROM:TO:STEP).
			if strings.Count(m, ":") < 7 && !strings.Contains(m, "::") {
				return m
			}
			return Mask
		})
	}},
	{home, func(v string) bool { return strings.Contains(v, "/home/") || strings.Contains(v, "/Users/") },
		func(v string) string { return home.ReplaceAllString(v, "${1}USER") }},
	{winHome, func(v string) bool { return strings.Contains(v, `\`) || strings.Contains(v, ":/") },
		func(v string) string { return winHome.ReplaceAllString(v, "${1}USER") }},
	{root, func(v string) bool { return strings.Contains(v, "/root") }, func(v string) string { return root.ReplaceAllString(v, "/ROOT") }},
	// Every other path, outside URLs (redactURL has decided on theirs).
	{pathRE, func(v string) bool { return strings.Contains(v, "/") }, func(v string) string {
		return outsideURLs(v, func(t string) string {
			return pathRE.ReplaceAllStringFunc(t, func(m string) string {
				i := strings.IndexAny(m, "~./")
				// A colon or a full stop that ends the path ends the sentence.
				p := strings.TrimRight(m[i:], ".:")
				if p == "" {
					p = m[i:]
				}
				return m[:i] + Path(p) + m[i+len(p):]
			})
		})
	}},
}

// replaceWord replaces w where it stands as a word of its own, so a user
// called "sb" does not turn "sbtest" into nonsense.
func replaceWord(v, w string) string {
	if !strings.Contains(v, w) {
		return v
	}
	re := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(w) + `($|[^A-Za-z0-9_])`)
	for {
		n := re.ReplaceAllString(v, "${1}"+Mask+"${2}")
		if n == v {
			return n
		}
		v = n
	}
}

// redactURL keeps a URL's scheme, path and harmless parameters and drops
// its user, password and host when they are not loopback.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if strings.Contains(raw, Mask) {
			// Redacted before: an address masked in its host makes it
			// unparsable. Leaving it keeps redaction idempotent.
			return raw
		}
		return Mask
	}
	u.User = nil
	if target.PathIsFile(u.Scheme) {
		// The URL's path is a file's: the database's name stays.
		if p := u.Path; strings.HasPrefix(p, "/") && !strings.Contains(p, Mask) {
			u.Path = "/" + Path(p)
			u.RawPath = u.Path
		}
	}
	// A host masked before (an address) stays as it is: redaction is
	// idempotent, so a server can check a document by redacting it again.
	if h := u.Hostname(); h != "" && h != "localhost" && !strings.HasPrefix(h, "127.") && h != "::1" && !strings.Contains(h, Mask) {
		port := u.Port()
		u.Host = "host"
		if port != "" {
			u.Host += ":" + port
		}
	}
	q := u.Query()
	for k := range q {
		lk := strings.ToLower(k)
		v := q.Get(k)
		if strings.Contains(v, Mask) {
			continue // redacted before
		}
		if secret.Secret(k, v) {
			q.Set(k, "x")
			continue
		}
		if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") {
			q.Set(k, Path(v)) // a socket, a certificate, a key file
			continue
		}
		if lk == "user" || lk == "sslcert" || lk == "host" && !strings.HasPrefix(q.Get(k), "/") {
			q.Set(k, "x")
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Find reports the first field of r (as a path such as
// "environment.hostname" or "warnings[2]") that Result would change, or ""
// when r is already redacted. It applies the same rules, so a server can
// refuse a document its client did not redact. Words Result itself leaves
// behind (the mask, the placeholder host of a redacted URL) are not taken
// for personal ones.
func Find(r *result.Result) (string, error) {
	doc, err := decoded(r)
	if err != nil {
		return "", err
	}
	return FindDecoded(r, doc), nil
}

// FindDecoded is Find for a caller that holds r's JSON already decoded
// into doc (by json.Unmarshal into an any): r gives the personal words,
// doc is searched.
func FindDecoded(r *result.Result, doc any) string {
	var lits []string
	for _, l := range literals(r) {
		if l != "host" && !strings.Contains(l, Mask) {
			lits = append(lits, l)
		}
	}
	return FindInDecoded(doc, lits...)
}

// FindIn reports the first field of v, any value that encodes as JSON, that
// the rules of Result would change, with literals as the personal words;
// "" when there is none.
func FindIn(v any, literals ...string) (string, error) {
	doc, err := decoded(v)
	if err != nil {
		return "", err
	}
	return FindInDecoded(doc, literals...), nil
}

// FindInDecoded is FindIn on a JSON document already decoded into doc (by
// json.Unmarshal into an any).
func FindInDecoded(doc any, literals ...string) string {
	s := &scrubber{literals: literals}
	return s.find("", "", doc)
}

// decoded is v through JSON, as the rules see it.
func decoded(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("redact: %w", err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("redact: %w", err)
	}
	return doc, nil
}

// Sweep returns a redacted copy of a sweep's record (its command line and
// options), by the rules of Result; sw is unchanged.
func Sweep(sw *result.Sweep) (*result.Sweep, error) {
	return through(sw, func(doc any) any { return (&scrubber{}).value("", doc) })
}

// find walks v (reached at path, under key) and returns the path of the
// first string the scrubber would change, in a stable order.
func (s *scrubber) find(path, key string, v any) string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if f := s.find(p, k, x[k]); f != "" {
				return f
			}
		}
	case []any:
		for i, e := range x {
			switch e.(type) {
			case float64, json.Number, bool, nil:
				continue // no string inside: no path to build
			}
			if f := s.find(fmt.Sprintf("%s[%d]", path, i), key, e); f != "" {
				return f
			}
		}
	case string:
		if s.value(key, x) != x {
			return path
		}
	}
	return ""
}
