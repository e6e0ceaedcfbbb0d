package sitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/dbmark/dbmark/internal/site/standing"
)

// Peer is the set of comparable results an entry stands among: the site
// computes it (site.PeerOf) and the store keeps the entry's headline and
// facts under its key, in the entry's transaction.
type Peer struct {
	Key      string            // the set's key
	Workload string            // the workload, for the workload's page
	Label    string            // the set as pages name it: engine, threads, rate
	Work     string            // the other options that change the work
	Facts    map[string]string // what the set's analysis compares
}

// PeerSet is one set of comparable results and its analysis.
type PeerSet struct {
	Key, Workload, Label, Work, Better string
	// Stored is how many results the store holds for the set, hidden ones
	// included; Analysis has the visible ones.
	Stored   int64
	Analysis *standing.Analysis
}

// peerCache keeps each set's results in memory, read from peer_facts, and
// their analysis. A set is read on from where it stopped when its count
// in peer_sets is above the rows read (another result was stored, by any
// server), and from the start when that leaves it below (a result
// committed late under a lower seq). A change of the moderation counter
// (a hide, unhide or delete) drops every set.
type peerCache struct {
	mu         sync.Mutex
	moderation int64
	sets       map[string]*cachedSet
}

type cachedSet struct {
	mu    sync.Mutex
	read  int64 // rows of peer_facts read, hidden ones too
	last  int64 // the highest seq read
	group *standing.Group
}

func (s *Store) putPeer(ctx context.Context, tx *sql.Tx, id string, p *Peer, headline float64, better string) error {
	if p == nil {
		return nil
	}
	facts, err := json.Marshal(p.Facts)
	if err != nil {
		return fmt.Errorf("standing facts: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.q("INSERT INTO peer_facts (seq, peer_key, headline, facts) SELECT seq, ?, ?, ? FROM entries WHERE id = ?"),
		p.Key, headline, string(facts), id); err != nil {
		return fmt.Errorf("standing facts: %w", err)
	}
	if p.Key == "" { // read, and in no set: not read again
		return nil
	}
	if _, err := tx.ExecContext(ctx, s.q("INSERT INTO peer_sets (peer_key, workload, label, work, better, results) VALUES (?, ?, ?, ?, ?, 1) "+
		"ON CONFLICT (peer_key) DO UPDATE SET results = peer_sets.results + 1"), p.Key, p.Workload, p.Label, p.Work, better); err != nil {
		return fmt.Errorf("standing set: %w", err)
	}
	return nil
}

func (s *Store) deletePeer(ctx context.Context, tx *sql.Tx, id string) error {
	if _, err := tx.ExecContext(ctx, s.q("UPDATE peer_sets SET results = results - 1 WHERE peer_key = "+
		"(SELECT p.peer_key FROM peer_facts p JOIN entries e ON e.seq = p.seq WHERE e.id = ?)"), id); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, s.q("DELETE FROM peer_facts WHERE seq = (SELECT seq FROM entries WHERE id = ?)"), id)
	return err
}

// Standing returns the set with key and its analysis, brought up to what
// the store holds; nil when no result is in the set.
func (s *Store) Standing(ctx context.Context, key string) (*PeerSet, error) {
	ps := &PeerSet{Key: key}
	var mod int64
	err := s.db.QueryRowContext(ctx, s.q("SELECT workload, label, work, better, results, (SELECT value FROM site_state WHERE name = 'moderation') "+
		"FROM peer_sets WHERE peer_key = ?"), key).Scan(&ps.Workload, &ps.Label, &ps.Work, &ps.Better, &ps.Stored, &mod)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("site store: standing: %w", err)
	}
	c := &s.peers
	c.mu.Lock()
	if c.sets == nil || mod != c.moderation {
		c.sets, c.moderation = map[string]*cachedSet{}, mod
	}
	cs := c.sets[key]
	if cs == nil {
		cs = &cachedSet{}
		c.sets[key] = cs
	}
	c.mu.Unlock()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	// Rows read beyond the count are results stored since it was read;
	// fewer after reading on means one committed late under a lower seq.
	if cs.group == nil || cs.read < ps.Stored {
		if err := s.readPeers(ctx, cs, key, ps.Better); err != nil {
			return nil, err
		}
		if cs.read < ps.Stored {
			cs.read, cs.last, cs.group = 0, 0, nil // not *cs: its mutex is held
			if err := s.readPeers(ctx, cs, key, ps.Better); err != nil {
				return nil, err
			}
		}
	}
	ps.Analysis = cs.group.Analysis()
	return ps, nil
}

// WarmStanding reads every set into memory, in one pass, so that no page
// waits for its set's first read (a server calls it before it serves).
func (s *Store) WarmStanding(ctx context.Context) error {
	better := map[string]string{}
	var mod int64
	if err := s.db.QueryRowContext(ctx, "SELECT value FROM site_state WHERE name = 'moderation'").Scan(&mod); err != nil {
		return fmt.Errorf("site store: standing: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, "SELECT peer_key, better FROM peer_sets")
	if err != nil {
		return fmt.Errorf("site store: standing: %w", err)
	}
	for rows.Next() {
		var k, b string
		if err := rows.Scan(&k, &b); err != nil {
			rows.Close()
			return fmt.Errorf("site store: standing: %w", err)
		}
		better[k] = b
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("site store: standing: %w", err)
	}
	// The hidden entries (few, by their index), then peer_facts in the
	// order it is stored: no lookup of an entry per row.
	hidden := map[int64]bool{}
	rows, err = s.db.QueryContext(ctx, "SELECT seq FROM entries WHERE hidden = 1")
	if err != nil {
		return fmt.Errorf("site store: standing: %w", err)
	}
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			rows.Close()
			return fmt.Errorf("site store: standing: %w", err)
		}
		hidden[seq] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("site store: standing: %w", err)
	}
	sets := map[string]*cachedSet{}
	rows, err = s.db.QueryContext(ctx, "SELECT peer_key, seq, headline, facts FROM peer_facts WHERE peer_key <> '' ORDER BY seq")
	if err != nil {
		return fmt.Errorf("site store: standing: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		var r peerRow
		if err := rows.Scan(&key, &r.seq, &r.headline, &r.facts); err != nil {
			return fmt.Errorf("site store: standing: %w", err)
		}
		if hidden[r.seq] {
			r.hidden = 1
		}
		cs := sets[key]
		if cs == nil {
			cs = &cachedSet{group: standing.NewGroup(better[key])}
			sets[key] = cs
		}
		if err := cs.add(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("site store: standing: %w", err)
	}
	c := &s.peers
	c.mu.Lock()
	c.sets, c.moderation = sets, mod
	c.mu.Unlock()
	return nil
}

// peerRow is a row of peer_facts as a set reads it.
type peerRow struct {
	seq      int64
	headline float64
	facts    []byte
	hidden   int
}

// add adds a row read from peer_facts to cs.
func (cs *cachedSet) add(r peerRow) error {
	cs.read++
	cs.last = max(cs.last, r.seq)
	if r.hidden != 0 {
		return nil
	}
	var f map[string]string
	if err := json.Unmarshal(r.facts, &f); err != nil {
		return fmt.Errorf("site store: standing: facts of seq %d: %w", r.seq, err)
	}
	cs.group.Add(r.headline, f)
	return nil
}

// readPeers adds the set's rows after cs.last to cs.
func (s *Store) readPeers(ctx context.Context, cs *cachedSet, key, better string) error {
	if cs.group == nil {
		cs.group = standing.NewGroup(better)
	}
	rows, err := s.db.QueryContext(ctx, s.q("SELECT p.seq, p.headline, p.facts, e.hidden FROM peer_facts p JOIN entries e ON e.seq = p.seq "+
		"WHERE p.peer_key = ? AND p.seq > ? ORDER BY p.seq"), key, cs.last)
	if err != nil {
		return fmt.Errorf("site store: standing: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r peerRow
		if err := rows.Scan(&r.seq, &r.headline, &r.facts, &r.hidden); err != nil {
			return fmt.Errorf("site store: standing: %w", err)
		}
		if err := cs.add(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("site store: standing: %w", err)
	}
	return nil
}

// PeerSets are the workload's sets with at least minStored results stored,
// the largest first, at most limit; their analyses are not filled in.
func (s *Store) PeerSets(ctx context.Context, workload string, minStored, limit int) ([]PeerSet, error) {
	rows, err := s.db.QueryContext(ctx, s.q(fmt.Sprintf("SELECT peer_key, workload, label, work, better, results FROM peer_sets "+
		"WHERE workload = ? AND results >= ? ORDER BY results DESC, peer_key LIMIT %d", limit)), workload, minStored)
	if err != nil {
		return nil, fmt.Errorf("site store: standing sets: %w", err)
	}
	defer rows.Close()
	var out []PeerSet
	for rows.Next() {
		var p PeerSet
		if err := rows.Scan(&p.Key, &p.Workload, &p.Label, &p.Work, &p.Better, &p.Stored); err != nil {
			return nil, fmt.Errorf("site store: standing sets: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// MissingPeer is an ok entry stored without its standing facts (before
// the store kept them).
type MissingPeer struct {
	ID, Better string
	Headline   float64
	Document   []byte
}

// BackfillPeers gives every ok entry that has no standing facts yet to
// peerOf and stores what it returns (nil: in no set, not asked again), a
// batch at a time; it returns how many it stored.
func (s *Store) BackfillPeers(ctx context.Context, peerOf func(MissingPeer) *Peer) (int, error) {
	done := 0
	for {
		rows, err := s.db.QueryContext(ctx, "SELECT e.id, e.better, e.headline, d.document FROM entries e JOIN documents d ON d.id = e.id "+
			"WHERE e.status = 'ok' AND NOT EXISTS (SELECT 1 FROM peer_facts p WHERE p.seq = e.seq) ORDER BY e.seq LIMIT 200")
		if err != nil {
			return done, fmt.Errorf("site store: standing backfill: %w", err)
		}
		var batch []MissingPeer
		for rows.Next() {
			var m MissingPeer
			var doc string
			if err := rows.Scan(&m.ID, &m.Better, &m.Headline, &doc); err != nil {
				rows.Close()
				return done, fmt.Errorf("site store: standing backfill: %w", err)
			}
			m.Document = []byte(doc)
			batch = append(batch, m)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return done, fmt.Errorf("site store: standing backfill: %w", err)
		}
		if len(batch) == 0 {
			return done, nil
		}
		tx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return done, fmt.Errorf("site store: standing backfill: %w", err)
		}
		for _, m := range batch {
			p := peerOf(m)
			if p == nil {
				p = &Peer{}
			}
			if err := s.putPeer(ctx, tx, m.ID, p, m.Headline, m.Better); err != nil {
				tx.Rollback()
				return done, fmt.Errorf("site store: standing backfill %s: %w", m.ID, err)
			}
		}
		if err := tx.Commit(); err != nil {
			return done, fmt.Errorf("site store: standing backfill: %w", err)
		}
		done += len(batch)
	}
}
