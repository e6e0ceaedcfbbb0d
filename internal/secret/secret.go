// Package secret is dbmark's one policy on credentials: what counts as a
// secret in a target's URL or DSN, on a command line and in free text, and
// how it is masked. Everything that prints, stores or publishes a string a
// user gave goes through it: the CLI's messages and run header, the results
// store, exports, submissions and the results site's check.
//
// A secret is masked everywhere, on this machine too; what is merely
// personal (host and user names, home paths) is the redact package's, which
// removes it only from what leaves the machine, on top of this policy.
//
// Masking is idempotent: masking masked text changes nothing, so a server
// can check a document by masking it again.
package secret

import (
	"net/url"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Mask replaces a secret in what dbmark prints and stores.
const Mask = "xxxxx"

// exactKeys are names that carry a secret only as a whole word, normalised
// as Key does ("pass" is a password, "bypass" is not).
var exactKeys = map[string]bool{
	"pass": true, "pw": true, "auth": true, "privatekeyid": true,
}

// keySuffixes end the normalised names that carry a secret: password,
// sslpassword, PGPASSWORD, mysql-password, MYSQL_PWD, aws_secret_access_key,
// api_key, private_key, github_token...
var keySuffixes = []string{
	"password", "passwd", "passphrase", "pwd", "secret", "token", "apikey", "secretkey", "privatekey",
	"accesskey", "sslkey", "credential", "credentials", "authkey", "sessionkey",
}

// Key reports whether a parameter, variable, option or field named name
// carries a secret. The name is compared in lower case without the
// separators "-", "_" and ".", so sslpassword, PGPASSWORD, --mysql-password,
// MYSQL_PWD and aws_secret_access_key all do. MySQL's boolean switches
// (allowNativePasswords, allowCleartextPasswords) do not.
func Key(name string) bool {
	n := normalise(name)
	if n == "" || strings.HasPrefix(n, "allow") {
		return false
	}
	if exactKeys[n] {
		return true
	}
	for _, s := range keySuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

func normalise(name string) string {
	var b strings.Builder
	for _, r := range strings.TrimLeft(name, "-$") {
		switch r {
		case '-', '_', '.':
			continue
		}
		b.WriteRune(foldASCII(r))
	}
	return b.String()
}

// foldASCII is r in lower case, as an ASCII letter when r is one in
// another form (the Kelvin sign is a k, the long s an s), as the patterns'
// case folding reads it.
func foldASCII(r rune) rune {
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < 0x80 {
			return unicode.ToLower(f)
		}
	}
	return unicode.ToLower(r)
}

// Secret says whether value, given for the parameter or field named key,
// is a secret: Key(key), and not a path an sslkey names.
func Secret(key, value string) bool { return Key(key) && secretValue(key, value) }

// secretValue says whether value, given for the secret-bearing key, is the
// secret itself: an sslkey that names a file is a path (the redact package
// decides on paths), one that holds the key's contents (sslinline) is not.
func secretValue(key, value string) bool {
	if strings.HasSuffix(normalise(key), "sslkey") {
		v := strings.Trim(value, `"'`)
		return !(strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~/") || strings.HasPrefix(v, "./") ||
			strings.HasPrefix(v, "../") || strings.HasPrefix(v, "%2F")) || strings.Contains(v, "PRIVATE")
	}
	return value != ""
}

// goDSN is the Go MySQL driver's DSN with a password:
// user:password@net(address)/dbname?params. The password runs to the last
// "@" before the network, as the driver reads it.
var goDSN = regexp.MustCompile(`^([^:@/\s]*):(.*)@([A-Za-z0-9]*\([^()]*\))?/`)

// keywordDSN is a libpq keyword/value connection string: it starts with
// "keyword=".
var keywordDSN = regexp.MustCompile(`^\s*[A-Za-z_]+\s*=`)

// Form is the shape of a database's address.
type Form int

const (
	FormURL      Form = iota // scheme://user:password@host/db?params, or anything else
	FormGoDSN                // user:password@net(address)/db?params
	FormKeywords             // host=h user=u password=pw dbname=db
)

// FormOf tells the shape of raw, as DSN reads it.
func FormOf(raw string) Form {
	if m := goDSN.FindStringSubmatchIndex(raw); m != nil && !strings.HasPrefix(raw[m[3]:], "://") {
		return FormGoDSN
	}
	if !strings.Contains(raw, "://") && keywordDSN.MatchString(raw) {
		return FormKeywords
	}
	return FormURL
}

// DSN masks the secrets of a database's address in any form the engines
// accept: a URL (its user's password and every secret parameter), a Go
// MySQL DSN and a libpq keyword string. What is not a secret stays as it
// was written. A URL that does not parse is the caller's to reduce: DSN
// masks what it can find in it as free text.
func DSN(raw string) string {
	switch FormOf(raw) {
	case FormGoDSN:
		m := goDSN.FindStringSubmatchIndex(raw)
		out := raw[:m[4]] + maskedOnce(raw[m[4]:m[5]]) + raw[m[5]:]
		if i := strings.IndexByte(out, '?'); i >= 0 {
			out = out[:i+1] + query(out[i+1:], Mask)
		}
		return out
	case FormKeywords:
		return Scrub(raw, Mask)
	}
	return urlText(raw, Mask)
}

// Target masks the secrets of a target given whole (a --target value):
// as DSN does, and a URL that does not parse is reduced to its scheme,
// since what stands in it may be anything, a password included.
func Target(raw string) string {
	if _, err := url.Parse(raw); err != nil {
		return unparseable(raw)
	}
	// A mask can change how the rest parses (a fragment that held the
	// rest of the user part becomes one of its own), so the target is
	// masked until masking changes nothing: redaction is idempotent. Text
	// that then no longer parses is reduced as the raw would be.
	out := DSN(raw)
	for range 8 {
		next := DSN(out)
		if next == out {
			if _, err := url.Parse(out); err != nil {
				return unparseable(raw)
			}
			return out
		}
		out = next
	}
	return unparseable(raw)
}

// unparseable is what Target shows of a target that does not parse: only
// a well-formed scheme is kept, since what stands before "://" may be a
// password too.
func unparseable(raw string) string {
	if i := strings.Index(raw, "://"); i > 0 && validScheme(raw[:i]) {
		return strings.ToLower(raw[:i]) + "://(unparseable)"
	}
	return "(unparseable)"
}

// wordSeparators split a target into the words Hidden compares.
const wordSeparators = "@/:?#&=;,()'\" \t\r\n"

// Hidden returns the words of raw, a target given whole, that Target
// masks (a password or the pieces of one, a secret parameter's value), as
// written and unescaped, longest first: what to take out of a message that
// quotes raw in another form, as an engine's error may.
func Hidden(raw string) []string { return hiddenWords(raw, Target(raw)) }

// Message masks the secrets of an error message of a command run with
// args: what Text finds, and every word of args that Args hides, however
// the message quotes it (an engine's error may name a password with an
// unescaped "@" as a database).
func Message(msg string, args []string) string {
	for _, h := range hiddenWords(strings.Join(args, " "), strings.Join(Args(args), " ")) {
		msg = strings.ReplaceAll(msg, h, Mask)
	}
	return Text(msg)
}

// hiddenWords are the words of raw that masked, raw with its secrets
// masked, lacks, also unescaped, longest first. Words shorter than four
// characters are left out, as too likely to stand in other words.
func hiddenWords(raw, masked string) []string {
	kept := map[string]bool{}
	for _, w := range words(masked) {
		kept[w] = true
	}
	seen := map[string]bool{}
	var out []string
	add := func(w string) {
		if len(w) >= 4 && !kept[w] && !seen[w] && !strings.Contains(w, Mask) {
			seen[w] = true
			out = append(out, w)
		}
	}
	for _, w := range words(raw) {
		add(w)
		if u, err := url.QueryUnescape(w); err == nil && u != w {
			add(u)
			for _, p := range words(u) {
				add(p)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(wordSeparators, r) })
}

// isURL says whether s starts as a URL does: a scheme, then "://".
func isURL(s string) bool {
	i := strings.Index(s, "://")
	return i > 0 && validScheme(s[:i])
}

// validScheme says whether s is a URL scheme (RFC 3986: a letter, then
// letters, digits, "+", "-" or ".").
func validScheme(s string) bool {
	for i, c := range s {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// maskedOnce is Mask, unless v is masked already (redaction is idempotent).
func maskedOnce(v string) string {
	if v == Mask {
		return v
	}
	return Mask
}

// maskURL masks a parsed URL's password, its secret parameters, its
// fragment and an opaque part that holds a user (scheme:user:password@...).
func maskURL(u *url.URL, mask string) string {
	if u.User != nil {
		if pw, has := u.User.Password(); has && pw != mask {
			u.User = url.UserPassword(u.User.Username(), mask)
		}
	}
	if i := strings.LastIndexByte(u.Opaque, '@'); i >= 0 && u.Opaque[:i] != mask {
		u.Opaque = mask + u.Opaque[i:]
	}
	u.RawQuery = query(u.RawQuery, mask)
	if u.Fragment != "" && u.Fragment != mask {
		// No engine reads a fragment: there, it is the rest of a value
		// with an unescaped "#" (a password, a key).
		u.Fragment, u.RawFragment = mask, ""
	}
	return u.String()
}

// query masks the secret parameters of a URL's raw query and keeps the
// rest byte for byte.
func query(raw, mask string) string {
	if raw == "" {
		return raw
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			val = v
		}
		if Key(name) && secretValue(name, val) && v != mask {
			parts[i] = k + "=" + mask
		}
	}
	return strings.Join(parts, "&")
}

// Args masks the secrets of a command line: the value of an option whose
// name carries one (--password=X, --password X, --mysql-password=X), and
// every secret in an argument's text (a URL or DSN, NAME=VALUE, a key).
func Args(args []string) []string {
	out := make([]string, len(args))
	for i, s := range args {
		name, val, hasEq := strings.Cut(s, "=")
		option := strings.HasPrefix(s, "-") && hasEq
		switch {
		case option && Key(name):
			out[i] = name + "=" + Mask
		case i > 0 && strings.HasPrefix(args[i-1], "-") && !strings.Contains(args[i-1], "=") && Key(args[i-1]):
			out[i] = Mask
		case option && isURL(val):
			out[i] = name + "=" + Target(val)
		case isURL(s):
			out[i] = Target(s)
		default:
			out[i] = Scrub(s, Mask)
		}
	}
	return out
}

// Text masks the secrets in free text with Mask.
func Text(s string) string { return Scrub(s, Mask) }

var (
	// privateKey is a PEM block of a private key (PKCS#1 and #8, EC,
	// OpenSSH, PGP), to its end or, cut short, to the end of the text.
	privateKey = regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|$)`)
	// urlInText is a URL standing in text.
	urlInText = regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]*://[^\s"']+`)
	// goDSNInText is a Go MySQL DSN's user and password in text (group 2).
	goDSNInText = regexp.MustCompile(`(^|[\s"'=])([^\s:@/"'=]*):([^\s"']+)@(?:(?:tcp|tcp4|tcp6|unix|udp)?\(|/)`)
	// assignment is NAME= or NAME: (quoted or not) where a word may start:
	// the value that follows is masked when the name carries a secret.
	// The first match is the leftmost, so a name is matched whole.
	// A name may be quoted, and quoted again (""name"" in CSV, \"name\"
	// in JSON).
	assignment = regexp.MustCompile(`((?:\\?["']){0,2})(\$?[\pL_][\pL\pN_.-]*)((?:\\?["']){0,2})(\s*(?:=|:)\s*)`)
	// spacedOption is an option whose value is the next word: --password X.
	spacedOption = regexp.MustCompile(`(?i)(?:^|\s)--[a-z0-9_-]*(?:password|passwd|passphrase|secret|token|api-?key)\s+`)
	// mysqlClient is a MySQL or MariaDB client's command, up to the end of
	// its line or of the shell's command: its -pPASSWORD is masked, whatever
	// characters the password holds.
	mysqlClient = regexp.MustCompile(`(?i)\b(?:mysql|mariadb|mysqldump|mariadb-dump|mysqladmin|mariadb-admin|mysqlslap|mariadb-slap|mysqlimport|mysqlcheck|mysqlpump|mysqlsh|mysqlbinlog)\b(?:\s-p\S+|[^\n;|&])*`)
	mysqlP      = regexp.MustCompile(`(\s)-p(\S+)`)
	// Well-known formats of keys and tokens, found by their own shape.
	awsKeyID  = regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b`)
	awsSecret = regexp.MustCompile(`(?:^|[^A-Za-z0-9/+=])([A-Za-z0-9/+]{40})(?:$|[^A-Za-z0-9/+=])`)
	gcpAPIKey = regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`)
	githubTok = regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})`)
	slackTok  = regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`)
	jwt       = regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`)
	gcpSecret = regexp.MustCompile(`\bGOCSPX-[A-Za-z0-9_-]{20,}`)
	bearer    = regexp.MustCompile(`(?i)\b(bearer\s+)[A-Za-z0-9._~+/-]{16,}=*`)
	// authHeader is an HTTP Authorization header: its credentials, after
	// the scheme's name.
	authHeader = regexp.MustCompile(`(?i)\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:basic|bearer|token|digest)\s+)?([^\s"',;]+)`)
	formatMark = []string{"AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA", "AIza", "GOCSPX-",
		"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "eyJ"}
)

// Scrub masks every secret in free text with mask: private key blocks,
// URLs and DSNs, NAME=VALUE and NAME: VALUE where the name carries a
// secret (PGPASSWORD=..., password=... of a libpq string, "private_key":
// "..." of a service account's JSON), options (--password X, a MySQL
// client's -pX) and keys of a well-known format (AWS, GCP, GitHub, Slack,
// JWTs, bearer tokens).
func Scrub(s, mask string) string {
	if !May(s) {
		return s
	}
	if strings.Contains(s, "PRIVATE KEY") {
		s = privateKey.ReplaceAllString(s, mask)
	}
	if strings.Contains(s, "://") {
		s = urlInText.ReplaceAllStringFunc(s, func(m string) string { return urlText(m, mask) })
	}
	if strings.Contains(s, "@") {
		s = replaceGroup(goDSNInText, s, 3, mask)
	}
	// A MySQL client's command is found before assignments: an empty
	// NAME= before it takes the next word, the client's name, as its value.
	if strings.Contains(s, "-p") {
		s = mysqlClient.ReplaceAllStringFunc(s, func(cmd string) string { return replaceGroup(mysqlP, cmd, 2, mask) })
	}
	if strings.ContainsAny(s, "=:") {
		s = assignments(s, mask)
	}
	s = replaceAfter(spacedOption, s, mask)
	return formats(s, mask)
}

// urlText masks a URL, in text or given whole. One that does not parse, or
// whose "@" parses elsewhere than after its user (a password with an
// unescaped "@", "/", "?" or "#" in it), has its secret parameters masked,
// then loses what stands between "://" and its last "@".
func urlText(m, mask string) string {
	i := 0 // where the address starts: after the scheme's "://"
	if isURL(m) {
		i = strings.Index(m, "://") + 3
	}
	u, ok := parsedURL(m, i > 0)
	if ok {
		return maskURL(u, mask)
	}
	if i == 0 {
		return m // no URL the engines take: Scrub's other rules apply
	}
	if head, q, ok := strings.Cut(m, "?"); ok {
		m = head + "?" + query(q, mask)
	}
	if at := strings.LastIndexByte(m, '@'); at > i && m[i:at] != mask {
		m = m[:i] + mask + m[at:]
	}
	// Written again as the URL package writes it, as a URL that parses
	// is: masking again changes nothing.
	if u, ok := parsedURL(m, true); ok {
		return u.String()
	}
	return m
}

// parsedURL is m parsed, and whether it parses with every "@" after a
// scheme's "://" (hasScheme) in its user, where the driver looks for it.
func parsedURL(m string, hasScheme bool) (*url.URL, bool) {
	u, err := url.Parse(m)
	if err != nil {
		return nil, false
	}
	return u, !hasScheme || !strings.ContainsRune(u.Host+u.Path+u.RawQuery+u.Fragment+u.Opaque, '@')
}

// replaceGroup replaces submatch n of every match of re in s with mask.
func replaceGroup(re *regexp.Regexp, s string, n int, mask string) string {
	return maskSpans(s, mask, re.FindAllStringSubmatchIndex(s, -1), func(l []int) (int, int) {
		if l[2*n] < 0 || s[l[2*n]:l[2*n+1]] == mask {
			return 0, 0
		}
		return l[2*n], l[2*n+1]
	})
}

// replaceAfter masks the value that follows each match of re.
func replaceAfter(re *regexp.Regexp, s, mask string) string {
	return maskSpans(s, mask, re.FindAllStringIndex(s, -1), func(l []int) (int, int) {
		return l[1], l[1] + valueLen(s[l[1]:], mask)
	})
}

// assignments masks the value of every NAME=VALUE and NAME: VALUE whose
// name carries a secret. Only the name and its sign are matched, so the
// value of one that does not ("-D x=password=PW") is searched in turn.
func assignments(s, mask string) string {
	return maskSpans(s, mask, assignment.FindAllStringSubmatchIndex(s, -1), func(l []int) (int, int) {
		name, at := s[l[4]:l[5]], l[1]
		n := valueLen(s[at:], mask)
		// "==" is a base64 text's padding, not a value.
		if !Key(name) || n == 0 || s[at] == '=' || !secretValue(name, s[at:at+n]) {
			return 0, 0
		}
		return at, at + n
	})
}

// maskSpans replaces with mask the span of s that span gives for each
// match of a pattern (locs, as regexp's FindAll...Index return them); an
// empty span is left alone, and one that overlaps the previous extends it.
func maskSpans(s, mask string, locs [][]int, span func(l []int) (start, end int)) string {
	if locs == nil {
		return s
	}
	var b strings.Builder
	at := 0
	for _, l := range locs {
		start, end := span(l)
		if start >= end || end <= at {
			continue
		}
		if start < at {
			// It overlaps the span masked before (a quoted value whose
			// quotes were ambiguous): the mask covers both.
			at = end
			continue
		}
		b.WriteString(s[at:start])
		b.WriteString(mask)
		at = end
	}
	b.WriteString(s[at:])
	return b.String()
}

// valueLen is the length of the value at the start of v: a quoted string
// (with backslash escapes), a string quoted as text quoted again writes it
// (""pw"" in CSV, \"pw\" in JSON), or a word that ends at a space, "&",
// ";", "," or a quote. A value masked before is left as it is: 0.
func valueLen(v, mask string) int {
	for _, q := range []string{`""`, `''`, `\"`, `\'`, `"`, `'`} {
		if !strings.HasPrefix(v, q) {
			continue
		}
		if strings.HasPrefix(v[len(q):], mask+q) {
			return 0
		}
		if end := closingQuote(v[len(q):], q); end >= 0 {
			return len(q) + end + len(q)
		}
		return len(v) // unterminated: the rest is the value
	}
	if strings.HasPrefix(v, mask) {
		return 0
	}
	n := strings.IndexAny(v, " \t\r\n&;,\"'")
	if n < 0 {
		return len(v)
	}
	return n
}

// closingQuote is the index in v of the quote q that ends a quoted value,
// or -1; a backslash escapes what follows it in a value quoted by one
// character.
func closingQuote(v, q string) int {
	if len(q) > 1 {
		return strings.Index(v, q)
	}
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case q[0]:
			return i
		}
	}
	return -1
}

// formats masks keys and tokens of a well-known shape, and the secret that
// follows an AWS access key's id within a line.
func formats(s, mask string) string {
	if !containsAny(s, formatMark) && !containsFold(s, "bearer") && !containsFold(s, "authorization") {
		return s
	}
	// Last first, so the indexes of the others stay right.
	ids := awsKeyID.FindAllStringIndex(s, -1)
	for i := len(ids) - 1; i >= 0; i-- {
		rest := s[ids[i][1]:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[:nl]
		}
		if l := awsSecret.FindStringSubmatchIndex(rest); l != nil {
			start, end := ids[i][1]+l[2], ids[i][1]+l[3]
			s = s[:start] + mask + s[end:]
		}
	}
	s = replaceGroup(authHeader, s, 1, mask)
	for _, re := range []*regexp.Regexp{awsKeyID, gcpAPIKey, gcpSecret, githubTok, slackTok, jwt} {
		s = re.ReplaceAllString(s, mask)
	}
	return bearer.ReplaceAllString(s, "${1}"+mask)
}

// mayWords are what text holding a NAME=VALUE secret or a spaced option
// must contain, in any case.
var mayWords = []string{"pass", "pwd", "secret", "token", "key", "auth", "credential", "pw"}

// May is false only for text Scrub leaves as it is: it is far cheaper than
// Scrub's patterns, and most strings of a result (numbers, times, versions,
// histograms) fail it.
func May(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			// Case folding in the patterns and in Key matches letters
			// such as the Kelvin sign (K) and the long s.
			return true
		}
	}
	switch {
	case strings.Contains(s, "PRIVATE KEY"), strings.Contains(s, "://"), strings.Contains(s, "@"):
		return true
	case strings.Contains(s, "-p") && (containsFold(s, "mysql") || containsFold(s, "mariadb")):
		return true
	case containsAny(s, formatMark), containsFold(s, "bearer"):
		return true
	}
	for _, w := range mayWords {
		if containsFold(s, w) {
			return true
		}
	}
	return false
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// containsFold reports whether s holds the lower-case ASCII word w in any
// case, without a lower-case copy of what may be a long string.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i]|0x20 == w[0] && strings.EqualFold(s[i:i+len(w)], w) {
			return true
		}
	}
	return false
}
