package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/dbmark/dbmark/internal/redact"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/secret"
	"github.com/dbmark/dbmark/internal/store/sqldb"
)

// dialect is what the shared queries need to know about a backend.
type dialect int

const (
	dialectSQLite dialect = iota
	dialectPostgres
)

// rebind writes q's ? placeholders in the backend's own form.
func (d dialect) rebind(q string) string {
	if d != dialectPostgres {
		return q
	}
	return sqldb.Rebind(q)
}

// columnTimeLayout is how SQLite keeps times: UTC and fixed width, so that
// ordering the text orders the times.
const columnTimeLayout = "2006-01-02T15:04:05.000000Z"

// timeArg is t as a column value. Both backends keep microseconds (what
// PostgreSQL's timestamptz holds), so listings agree; the document keeps
// the exact time.
func (d dialect) timeArg(t time.Time) any {
	t = t.UTC().Truncate(time.Microsecond)
	if d == dialectSQLite {
		return t.Format(columnTimeLayout)
	}
	return t
}

// utcTime scans a time column from either backend: a time.Time from
// PostgreSQL, text from SQLite.
type utcTime struct{ t time.Time }

func (u *utcTime) Scan(src any) error {
	switch v := src.(type) {
	case time.Time:
		u.t = v.UTC()
		return nil
	case string:
		return u.parse(v)
	case []byte:
		return u.parse(string(v))
	}
	return fmt.Errorf("scan time: unexpected %T", src)
}

func (u *utcTime) parse(s string) error {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("scan time: %w", err)
	}
	u.t = t.UTC()
	return nil
}

// sqlStore is the Store of both backends, over database/sql.
type sqlStore struct {
	db     *sql.DB
	d      dialect
	logger *slog.Logger
	// beforeCommit, when set by a test, runs between the write and the
	// commit, so a test can make a save fail with its write already done.
	beforeCommit func(ctx context.Context) error
}

func newSQLStore(db *sql.DB, d dialect, logger *slog.Logger) *sqlStore {
	return &sqlStore{db: db, d: d, logger: logger}
}

// row is one run's column values, derived from its document.
type row struct {
	uuid                  string
	startedAt, endedAt    time.Time
	workload              string
	targetKind, targetURL string
	status                string
	headline              float64
	headlineUnit          string
	durationS             float64
	sweepID               sql.NullString
	document              string
}

// rowOf checks r and encodes it. Everything that can be wrong with a result
// is found here, before the transaction starts, so a bad result never
// reaches the database.
func rowOf(r *result.Result) (row, error) {
	u, err := uuid.Parse(r.ID)
	if err != nil {
		return row{}, fmt.Errorf("id is not a UUID: %w", err)
	}
	if r.SchemaVersion < 1 || r.SchemaVersion > result.SchemaVersion {
		// Get would refuse it: never store what cannot be read back.
		return row{}, fmt.Errorf("schema version %d is not supported (this dbmark writes 1 to %d)", r.SchemaVersion, result.SchemaVersion)
	}
	if !validStatus(string(r.Status)) {
		return row{}, fmt.Errorf("status %q is not ok, degraded, interrupted or failed", r.Status)
	}
	if r.StartedAt.IsZero() {
		return row{}, errors.New("start time is not set")
	}
	// Compact, unlike result.Marshal: the store is not read by people, and
	// PostgreSQL re-encodes JSONB anyway. NaN or infinite numbers fail here.
	// No secret is stored: what the run was given (a password in its
	// target or command line, a token in a setting) is masked first.
	doc, err := redact.Secrets(r)
	if err != nil {
		return row{}, fmt.Errorf("encode: %w", err)
	}
	rw := row{
		uuid:         u.String(), // canonical lower case, which Resolve matches
		startedAt:    r.StartedAt,
		endedAt:      r.EndedAt,
		workload:     r.Workload.Name,
		targetKind:   r.Target.Kind,
		targetURL:    secret.Text(r.Target.URL), // as Secrets masks it in the document
		status:       string(r.Status),
		headline:     r.Summary.Headline,
		headlineUnit: r.Summary.HeadlineUnit,
		durationS:    r.Summary.DurationS,
		document:     string(doc),
	}
	if r.Sweep != nil && r.Sweep.ID != "" {
		rw.sweepID = sql.NullString{String: r.Sweep.ID, Valid: true}
	}
	return rw, nil
}

func validStatus(s string) bool {
	return result.Status(s).Valid()
}

// upsertSQL replaces a run saved before under the same UUID in place, so it
// keeps its ID.
const upsertSQL = `
INSERT INTO runs (uuid, started_at, ended_at, workload, target_kind, target_url,
                  status, headline, headline_unit, duration_s, sweep_id, document)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (uuid) DO UPDATE SET
    started_at = excluded.started_at,
    ended_at = excluded.ended_at,
    workload = excluded.workload,
    target_kind = excluded.target_kind,
    target_url = excluded.target_url,
    status = excluded.status,
    headline = excluded.headline,
    headline_unit = excluded.headline_unit,
    duration_s = excluded.duration_s,
    sweep_id = excluded.sweep_id,
    document = excluded.document
RETURNING id`

func (s *sqlStore) Save(ctx context.Context, r *result.Result) (ID, error) {
	if r == nil {
		return 0, errors.New("store: save result: no result")
	}
	rw, err := rowOf(r)
	if err != nil {
		return 0, fmt.Errorf("store: save result %s: %w", r.ID, err)
	}
	id, err := s.save(ctx, rw)
	if err != nil {
		return 0, fmt.Errorf("store: save result %s: %w", rw.uuid, err)
	}
	s.logger.DebugContext(ctx, "result saved", "id", id, "uuid", rw.uuid)
	return id, nil
}

func (s *sqlStore) save(ctx context.Context, rw row) (_ ID, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			tx.Rollback() // its own error adds nothing to err
		}
	}()
	var id ID
	err = tx.QueryRowContext(ctx, s.d.rebind(upsertSQL),
		rw.uuid, s.d.timeArg(rw.startedAt), s.d.timeArg(rw.endedAt), rw.workload,
		rw.targetKind, rw.targetURL, rw.status, rw.headline, rw.headlineUnit,
		rw.durationS, rw.sweepID, rw.document,
	).Scan(&id)
	if err != nil {
		return 0, err
	}
	if s.beforeCommit != nil {
		if err := s.beforeCommit(ctx); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			// database/sql may have rolled back on the cancellation first
			// and then reports only ErrTxDone; the cancellation is the cause.
			err = ctxErr
		}
		return 0, fmt.Errorf("commit: %w", err)
	}
	return id, nil
}

func (s *sqlStore) Get(ctx context.Context, id ID) (*result.Result, error) {
	var doc []byte
	err := s.db.QueryRowContext(ctx, s.d.rebind(`SELECT document FROM runs WHERE id = ?`), id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: get result %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get result %d: %w", id, err)
	}
	r, err := result.Unmarshal(doc)
	if err != nil {
		return nil, fmt.Errorf("store: get result %d: %w", id, err)
	}
	return r, nil
}

// match is a run a reference may mean.
type match struct {
	id   ID
	uuid string
}

// maxShown is how many candidates an ambiguity error lists.
const maxShown = 5

func (s *sqlStore) Resolve(ctx context.Context, ref string) (ID, error) {
	ref = strings.ToLower(strings.TrimSpace(ref))
	id, err := s.resolve(ctx, runsTable, ref)
	if err != nil {
		return 0, fmt.Errorf("store: resolve %q: %w", ref, err)
	}
	return id, nil
}

// table is what resolve looks in: runs or sweeps, with the words its
// messages use ("run 12", "not a result id").
type table struct{ name, noun, ref string }

var (
	runsTable   = table{"runs", "run", "result"}
	sweepsTable = table{"sweeps", "sweep", "sweep"}
)

func (s *sqlStore) resolve(ctx context.Context, tb table, ref string) (ID, error) {
	if ref == "" {
		return 0, fmt.Errorf("empty reference: give a %s id or uuid", tb.ref)
	}
	if u, err := uuid.Parse(ref); err == nil && len(ref) == len(u.String()) {
		ms, err := s.query(ctx, `SELECT id, uuid FROM `+tb.name+` WHERE uuid = ?`, u.String())
		if err != nil {
			return 0, err
		}
		return pick(tb, ms)
	}
	if !isUUIDPrefix(ref) {
		return 0, fmt.Errorf("not a %s id, uuid or uuid prefix", tb.ref)
	}
	var byID []match
	if n, err := strconv.ParseInt(ref, 10, 64); err == nil {
		if byID, err = s.query(ctx, `SELECT id, uuid FROM `+tb.name+` WHERE id = ?`, n); err != nil {
			return 0, err
		}
		if len(ref) < MinPrefix {
			return pick(tb, byID)
		}
	} else if len(ref) < MinPrefix {
		return 0, fmt.Errorf("a uuid prefix needs at least %d characters", MinPrefix)
	}
	// A run of digits can be both an ID and a UUID prefix. Each alone is
	// fine; if they mean different runs, the user must say which.
	byPrefix, err := s.query(ctx, `SELECT id, uuid FROM `+tb.name+` WHERE uuid LIKE ? ORDER BY id LIMIT `+strconv.Itoa(maxShown+1), ref+"%")
	if err != nil {
		return 0, err
	}
	if len(byID) == 1 && (len(byPrefix) == 0 || len(byPrefix) == 1 && byPrefix[0].id == byID[0].id) {
		return byID[0].id, nil
	}
	if len(byID) == 1 {
		return 0, fmt.Errorf("%w: it is the id of %s %d and the start of the uuid of %s; use a full uuid", ErrAmbiguous, tb.noun, byID[0].id, describe(tb, byPrefix))
	}
	return pick(tb, byPrefix)
}

// isUUIDPrefix reports whether s could start a canonical (lower-case) UUID.
func isUUIDPrefix(s string) bool {
	const canonical = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
	if len(s) > len(canonical) {
		return false
	}
	for i, c := range s {
		if canonical[i] == '-' {
			if c != '-' {
				return false
			}
		} else if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func pick(tb table, ms []match) (ID, error) {
	switch len(ms) {
	case 0:
		return 0, ErrNotFound
	case 1:
		return ms[0].id, nil
	}
	return 0, fmt.Errorf("%w: it matches %s; give more of the uuid", ErrAmbiguous, describe(tb, ms))
}

func describe(tb table, ms []match) string {
	var parts []string
	for i, m := range ms {
		if i == maxShown {
			parts = append(parts, "and more")
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d (%s)", tb.noun, m.id, m.uuid))
	}
	return strings.Join(parts, ", ")
}

func (s *sqlStore) query(ctx context.Context, q string, args ...any) ([]match, error) {
	rows, err := s.db.QueryContext(ctx, s.d.rebind(q), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ms []match
	for rows.Next() {
		var m match
		if err := rows.Scan(&m.id, &m.uuid); err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	return ms, rows.Err()
}

func (s *sqlStore) List(ctx context.Context, f Filter) ([]Summary, error) {
	if f.Status != "" && !validStatus(f.Status) {
		return nil, fmt.Errorf("store: list results: status %q is not ok, degraded, interrupted or failed", f.Status)
	}
	q := `SELECT id, uuid, started_at, workload, target_kind, status, headline, headline_unit, duration_s, sweep_id FROM runs`
	var where []string
	var args []any
	for _, c := range []struct{ col, val string }{
		{"workload", f.Workload}, {"status", f.Status}, {"sweep_id", f.SweepID},
	} {
		if c.val != "" {
			where = append(where, c.col+" = ?")
			args = append(args, c.val)
		}
	}
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	// id breaks ties: of two runs started in the same microsecond, the one
	// saved last is listed first.
	q += " ORDER BY started_at DESC, id DESC"
	if f.Limit > 0 {
		q += " LIMIT " + strconv.Itoa(f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, s.d.rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("store: list results: %w", err)
	}
	defer rows.Close()
	out := []Summary{}
	for rows.Next() {
		var (
			sum     Summary
			started utcTime
			sweep   sql.NullString
		)
		if err := rows.Scan(&sum.ID, &sum.UUID, &started, &sum.Workload, &sum.Target, &sum.Status,
			&sum.Headline, &sum.HeadlineUnit, &sum.DurationS, &sweep); err != nil {
			return nil, fmt.Errorf("store: list results: %w", err)
		}
		sum.StartedAt, sum.SweepID = started.t, sweep.String
		out = append(out, sum)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list results: %w", err)
	}
	return out, nil
}

func (s *sqlStore) Delete(ctx context.Context, id ID) error {
	res, err := s.db.ExecContext(ctx, s.d.rebind(`DELETE FROM runs WHERE id = ?`), id)
	if err != nil {
		return fmt.Errorf("store: delete result %d: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: delete result %d: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("store: delete result %d: %w", id, ErrNotFound)
	}
	s.logger.DebugContext(ctx, "result deleted", "id", id)
	return nil
}

func (s *sqlStore) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}
