package mysql

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"

	my "github.com/go-sql-driver/mysql"

	"github.com/dbmark/dbmark/internal/target"
)

// wire runs commands on the socket the driver opened and authenticated,
// speaking the client/server protocol's command phase itself. The driver
// does the rest (the handshake and authentication, TLS, compression, the
// goodbye); both can share the socket because a command's answer is read
// to its end and the server sends nothing unasked.
//
// Measured (bench/README.md): through the driver, a point select cost
// about twice the client CPU of sysbench's, in allocations per statement
// (an args slice, driver.Value boxes, a result and rows object) and a
// read through two buffers. Here a command is one buffer and one write,
// and answers are parsed in place from one read buffer.
type wire struct {
	sock     target.Socket // in a mux task, waits in the task's loop
	caps     uint32        // the capability flags the driver and server agreed on
	ext      uint32        // MariaDB's extended capabilities, likewise
	out      []byte
	in       target.InBuf
	joined   []byte   // a packet the server split, put back together
	textCols []column // the last kept text result's columns
	broken   error    // set once the connection cannot be used any more
}

// Capability flags that change the shape of the answers.
const (
	capCompress      = 1 << 5
	capSSL           = 1 << 11
	capDeprecateEOF  = 1 << 24
	extCacheMetadata = 1 << 4 // MariaDB: a statement's columns are described once
)

// Commands and the first bytes of answers.
const (
	comQuery       = 0x03
	comStmtPrepare = 0x16
	comStmtExecute = 0x17
	comStmtClose   = 0x19

	pktOK    = 0x00
	pktInfil = 0xfb
	pktEOF   = 0xfe
	pktErr   = 0xff

	statusMoreResults = 0x0008

	maxPacket = 1<<24 - 1 // a longer payload goes in several packets
)

// Column types of the binary protocol that are not length-encoded strings.
const (
	typeTiny      = 1
	typeShort     = 2
	typeLong      = 3
	typeFloat     = 4
	typeDouble    = 5
	typeNull      = 6
	typeTimestamp = 7
	typeLongLong  = 8
	typeInt24     = 9
	typeDate      = 10
	typeTime      = 11
	typeDateTime  = 12
	typeYear      = 13
	typeString    = 0xfe

	flagUnsigned = 0x20
)

func newWire(conn net.Conn, caps, ext uint32) *wire {
	return &wire{sock: target.NewSocket(conn), caps: caps, ext: ext, in: target.NewInBuf()}
}

// fail marks the connection unusable: after a lost or interrupted read or
// write, or an answer that makes no sense, where the protocol stands is
// unknown.
func (w *wire) fail(err error) error {
	if w.broken == nil {
		w.broken = err
	}
	return err
}

// begin starts command cmd in the output buffer, after room for the
// packet header.
func (w *wire) begin(cmd byte) {
	w.out = append(w.out[:0], 0, 0, 0, 0, cmd)
}

// send writes the command begun in the output buffer, in one write. A
// payload of 16 MiB or more travels in several packets.
func (w *wire) send() error {
	if w.broken != nil {
		return w.broken
	}
	payload := len(w.out) - 4
	if payload < maxPacket {
		putHeader(w.out, payload, 0)
	} else {
		w.out = split(w.out[4:])
	}
	_, err := w.sock.Write(w.out)
	if cap(w.out) > target.InBufKeep {
		w.out = nil
	}
	if err != nil {
		return w.fail(err)
	}
	return nil
}

func putHeader(b []byte, size int, seq byte) {
	b[0], b[1], b[2], b[3] = byte(size), byte(size>>8), byte(size>>16), seq
}

// split cuts payload into packets of at most maxPacket bytes; one of
// exactly maxPacket bytes is followed by an empty one.
func split(payload []byte) []byte {
	out := make([]byte, 0, len(payload)+4*(len(payload)/maxPacket+1))
	for seq := byte(0); ; seq++ {
		n := min(len(payload), maxPacket)
		out = append(out, 0, 0, 0, 0)
		putHeader(out[len(out)-4:], n, seq)
		out = append(out, payload[:n]...)
		payload = payload[n:]
		if n < maxPacket {
			return out
		}
	}
}

// next returns the next packet's payload, valid until the next call.
func (w *wire) next() ([]byte, error) {
	p, err := w.packet()
	if err != nil || len(p) < maxPacket {
		return p, err
	}
	w.joined = append(w.joined[:0], p...)
	for {
		p, err = w.packet()
		if err != nil {
			return nil, err
		}
		w.joined = append(w.joined, p...)
		if len(p) < maxPacket {
			return w.joined, nil
		}
	}
}

// packet returns one packet's payload as it came.
func (w *wire) packet() ([]byte, error) {
	for {
		need := 4
		if n := w.in.W - w.in.R; n >= 4 {
			size := int(w.in.Buf[w.in.R]) | int(w.in.Buf[w.in.R+1])<<8 | int(w.in.Buf[w.in.R+2])<<16
			if n >= 4+size {
				p := w.in.Buf[w.in.R+4 : w.in.R+4+size]
				w.in.R += 4 + size
				return p, nil
			}
			need = 4 + size
		}
		if err := w.in.Fill(&w.sock, need); err != nil {
			return nil, w.fail(err)
		}
	}
}

// done ends an answer: a large read buffer is given back.
func (w *wire) done() {
	w.in.Trim()
	if cap(w.joined) > target.InBufKeep {
		w.joined = nil
	}
}

// column is what a statement needs to know of a result column.
type column struct {
	name     string
	typ      byte
	flags    uint16
	decimals byte
}

// results is what reading one command's answer leaves.
type results struct {
	rows     int64 // rows returned by every result set
	affected int64 // rows affected, from the OK packets
	// row, when keep is set, holds the last result: its last row and
	// column names, or no columns and its affected rows.
	row   target.Row
	keep  bool
	first bool // keep the first row rather than the last
}

// query sends sql as a text query and reads its answer.
func query[S string | []byte](w *wire, sql S, res *results) error {
	w.begin(comQuery)
	w.out = append(w.out, sql...)
	if err := w.send(); err != nil {
		return err
	}
	return w.readAnswer(res, nil)
}

// stmt is a statement prepared on the server.
type stmt struct {
	id      uint32
	params  int
	columns []column // as the server last described them
}

// prepare prepares sql on the server.
func (w *wire) prepare(sql string) (*stmt, error) {
	w.begin(comStmtPrepare)
	w.out = append(w.out, sql...)
	if err := w.send(); err != nil {
		return nil, err
	}
	p, err := w.next()
	if err != nil {
		return nil, err
	}
	if len(p) > 0 && p[0] == pktErr {
		return nil, parseErr(p)
	}
	if len(p) < 12 || p[0] != pktOK {
		return nil, w.fail(fmt.Errorf("MySQL protocol: malformed answer to a prepare (%d bytes)", len(p)))
	}
	s := &stmt{id: binary.LittleEndian.Uint32(p[1:]), params: int(binary.LittleEndian.Uint16(p[7:]))}
	ncols := int(binary.LittleEndian.Uint16(p[5:]))
	if s.params > 0 {
		if err := w.readColumns(s.params, nil, false); err != nil {
			return nil, err
		}
	}
	if ncols > 0 {
		s.columns = make([]column, ncols)
		if err := w.readColumns(ncols, s.columns, true); err != nil {
			return nil, err
		}
	}
	w.done()
	return s, nil
}

// readColumns reads n column definitions into cols (nil: skipped), and
// the EOF packet after them when the protocol has one.
func (w *wire) readColumns(n int, cols []column, names bool) error {
	for i := range n {
		p, err := w.next()
		if err != nil {
			return err
		}
		if cols != nil {
			if err := parseColumn(p, &cols[i], names); err != nil {
				return w.fail(err)
			}
		}
	}
	if w.caps&capDeprecateEOF == 0 {
		if _, err := w.next(); err != nil {
			return err
		}
	}
	return nil
}

// parseColumn reads a column definition: six length-encoded strings
// (catalog, schema, table, original table, name, original name), then
// fixed fields.
func parseColumn(p []byte, c *column, names bool) error {
	for i := range 6 {
		s, rest, ok := lenencBytes(p)
		if !ok {
			return errors.New("MySQL protocol: malformed column definition")
		}
		if i == 4 && names && c.name != string(s) {
			c.name = string(s)
		}
		p = rest
	}
	// Length of the fixed fields, charset(2), length(4), type(1),
	// flags(2), decimals(1).
	_, k := lenencInt(p)
	if k == 0 || len(p) < k+10 {
		return errors.New("MySQL protocol: malformed column definition")
	}
	p = p[k:]
	c.typ, c.flags, c.decimals = p[6], binary.LittleEndian.Uint16(p[7:]), p[9]
	return nil
}

// execute runs s with args and reads its answer.
func (w *wire) execute(s *stmt, args []target.Value, res *results) error {
	if len(args) != s.params {
		return fmt.Errorf("the statement has %d placeholders, %d arguments given", s.params, len(args))
	}
	w.begin(comStmtExecute)
	w.out = binary.LittleEndian.AppendUint32(w.out, s.id)
	w.out = append(w.out, 0, 1, 0, 0, 0) // no cursor, one iteration
	if len(args) > 0 {
		at := len(w.out)
		for range (len(args) + 7) / 8 {
			w.out = append(w.out, 0)
		}
		w.out = append(w.out, 1) // types follow
		for i, a := range args {
			switch {
			case a.IsNull:
				w.out[at+i/8] |= 1 << (i % 8)
				w.out = append(w.out, typeNull, 0)
			case a.IsStr:
				w.out = append(w.out, typeString, 0)
			default:
				w.out = append(w.out, typeLongLong, 0)
			}
		}
		for _, a := range args {
			switch {
			case a.IsNull:
			case a.IsStr:
				w.out = appendLenenc(w.out, uint64(len(a.Str)))
				w.out = append(w.out, a.Str...)
			default:
				w.out = binary.LittleEndian.AppendUint64(w.out, uint64(a.Int))
			}
		}
	}
	if err := w.send(); err != nil {
		return err
	}
	return w.readAnswer(res, s)
}

// closeStmt releases s on the server, which does not answer.
func (w *wire) closeStmt(s *stmt) error {
	w.begin(comStmtClose)
	w.out = binary.LittleEndian.AppendUint32(w.out, s.id)
	return w.send()
}

// readAnswer reads a command's answer to its end: OK packets and result
// sets, one after another while the server says more follow. s is the
// statement executed, nil for a text query. An error the server reports
// leaves the connection usable.
func (w *wire) readAnswer(res *results, s *stmt) error {
	defer w.done()
	sets := 0
	for {
		p, err := w.next()
		if err != nil {
			return err
		}
		if len(p) == 0 {
			return w.fail(errors.New("MySQL protocol: empty answer"))
		}
		var status uint16
		switch p[0] {
		case pktErr:
			return parseErr(p)
		case pktOK:
			n, st := parseOK(p)
			res.affected += n
			if res.keep && sets == 0 {
				// A procedure's closing OK does not hide its last rows.
				res.row.Rows, res.row.Columns = n, res.row.Columns[:0]
			}
			status = st
		case pktInfil:
			// LOAD DATA LOCAL INFILE: send an empty file, then refuse.
			w.out = append(w.out[:0], 0, 0, 0, 0)
			putHeader(w.out, 0, 2)
			if err := w.send(); err != nil {
				return err
			}
			_ = w.readAnswer(&results{}, nil)
			return errors.New("LOAD DATA LOCAL INFILE is not supported")
		default:
			sets++
			status, err = w.readResultSet(p, res, s)
			if err != nil {
				return err
			}
		}
		if status&statusMoreResults == 0 {
			return nil
		}
	}
}

// readResultSet reads a result set whose column count packet is p and
// returns the status flags at its end.
func (w *wire) readResultSet(p []byte, res *results, s *stmt) (uint16, error) {
	n, k := lenencInt(p)
	if k == 0 || n == 0 || n > 1<<16 {
		return 0, w.fail(fmt.Errorf("MySQL protocol: unexpected answer 0x%02x", p[0]))
	}
	ncols := int(n)
	described := true
	if w.ext&extCacheMetadata != 0 && len(p) > k {
		described = p[k] == 1
	}
	var cols []column
	switch {
	case s != nil:
		if len(s.columns) != ncols {
			s.columns = make([]column, ncols)
		}
		cols = s.columns
	case res.keep:
		// A text query's columns, kept between queries so that the same
		// names are not made again.
		if cap(w.textCols) < ncols {
			w.textCols = make([]column, ncols)
		}
		cols = w.textCols[:ncols]
	}
	if described {
		if err := w.readColumns(ncols, cols, res.keep); err != nil {
			return 0, err
		}
	}
	if res.keep {
		res.row.Rows = 0
		res.row.Columns = res.row.Columns[:0]
		for _, c := range cols {
			res.row.Columns = append(res.row.Columns, c.name)
		}
	}
	for {
		p, err := w.next()
		if err != nil {
			return 0, err
		}
		if len(p) == 0 {
			return 0, w.fail(errors.New("MySQL protocol: empty row"))
		}
		switch {
		case p[0] == pktErr:
			return 0, parseErr(p)
		case p[0] == pktEOF && len(p) < maxPacket && (len(p) < 9 || w.caps&capDeprecateEOF != 0):
			if w.caps&capDeprecateEOF != 0 {
				_, st := parseOK(p)
				return st, nil
			}
			if len(p) < 5 {
				return 0, nil
			}
			return binary.LittleEndian.Uint16(p[3:]), nil
		}
		res.rows++
		if !res.keep || res.first && res.row.Rows > 0 {
			continue
		}
		res.row.Rows++
		if s != nil {
			err = keepBinaryRow(&res.row, p, cols)
		} else {
			err = keepTextRow(&res.row, p, ncols)
		}
		if err != nil {
			return 0, w.fail(err)
		}
	}
}

// parseOK returns an OK packet's affected rows and status flags.
func parseOK(p []byte) (int64, uint16) {
	p = p[1:]
	affected, k := lenencInt(p)
	p = p[k:]
	_, k = lenencInt(p) // last insert id
	p = p[k:]
	if len(p) < 2 {
		return int64(affected), 0
	}
	return int64(affected), binary.LittleEndian.Uint16(p)
}

// parseErr turns an ERR packet into the driver's error type, which
// Classify and the rest of the tool already know.
func parseErr(p []byte) error {
	e := &my.MySQLError{}
	if len(p) >= 3 {
		e.Number = binary.LittleEndian.Uint16(p[1:])
		p = p[3:]
	}
	if len(p) >= 6 && p[0] == '#' {
		copy(e.SQLState[:], p[1:6])
		p = p[6:]
	}
	e.Message = string(p)
	return e
}

// keepTextRow copies a text row's values into row's reused buffers.
func keepTextRow(row *target.Row, p []byte, n int) error {
	values := reuse(row, n)
	for i := range n {
		if len(p) > 0 && p[0] == 0xfb {
			values[i] = nil
			p = p[1:]
			continue
		}
		v, rest, ok := lenencBytes(p)
		if !ok {
			return errors.New("MySQL protocol: malformed row")
		}
		values[i] = keep(values[i], v)
		p = rest
	}
	return nil
}

// keepBinaryRow copies a binary row's values, as text, into row's reused
// buffers: what the server would have sent for a text query.
func keepBinaryRow(row *target.Row, p []byte, cols []column) error {
	n := len(cols)
	values := reuse(row, n)
	nullBytes := (n + 9) / 8
	if len(p) < 1+nullBytes {
		return errors.New("MySQL protocol: malformed row")
	}
	nulls := p[1 : 1+nullBytes]
	p = p[1+nullBytes:]
	for i, c := range cols {
		if nulls[(i+2)/8]&(1<<((i+2)%8)) != 0 {
			values[i] = nil
			continue
		}
		var ok bool
		values[i], p, ok = appendBinary(values[i][:0], p, c)
		if !ok {
			return errors.New("MySQL protocol: malformed row")
		}
		if values[i] == nil {
			values[i] = []byte{}
		}
	}
	return nil
}

func reuse(row *target.Row, n int) [][]byte {
	if cap(row.Values) < n {
		row.Values = append(row.Values[:cap(row.Values)], make([][]byte, n-cap(row.Values))...)
	}
	row.Values = row.Values[:n]
	return row.Values
}

// keep copies v into b's room; an empty value stays non-nil (nil is NULL).
func keep(b, v []byte) []byte {
	if cap(b) > target.InBufKeep {
		b = nil // do not keep a large value's room
	}
	b = append(b[:0], v...)
	if b == nil {
		b = []byte{}
	}
	return b
}

// appendBinary appends the text of the binary value at the start of p and
// returns the rest of p.
func appendBinary(b, p []byte, c column) ([]byte, []byte, bool) {
	switch c.typ {
	case typeTiny, typeShort, typeYear, typeLong, typeInt24, typeLongLong:
		size := intSize(c.typ)
		if len(p) < size {
			return b, p, false
		}
		v := littleEndian(p[:size])
		p = p[size:]
		if c.flags&flagUnsigned != 0 || c.typ == typeYear {
			return strconv.AppendUint(b, v, 10), p, true
		}
		shift := 64 - 8*size
		return strconv.AppendInt(b, int64(v<<shift)>>shift, 10), p, true
	case typeFloat:
		if len(p) < 4 {
			return b, p, false
		}
		v := math.Float32frombits(binary.LittleEndian.Uint32(p))
		return appendFloat(b, float64(v), 6), p[4:], true
	case typeDouble:
		if len(p) < 8 {
			return b, p, false
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(p))
		return appendFloat(b, v, -1), p[8:], true
	case typeNull:
		return b, p, true
	case typeDate, typeDateTime, typeTimestamp:
		if len(p) < 1 || len(p) < 1+int(p[0]) {
			return b, p, false
		}
		t := p[1 : 1+p[0]]
		p = p[1+p[0]:]
		return appendDateTime(b, t, c), p, true
	case typeTime:
		if len(p) < 1 || len(p) < 1+int(p[0]) {
			return b, p, false
		}
		t := p[1 : 1+p[0]]
		p = p[1+p[0]:]
		return appendTime(b, t, c.decimals), p, true
	}
	v, rest, ok := lenencBytes(p)
	return append(b, v...), rest, ok
}

// appendFloat writes v as the server does in a text result: FLOAT with 6
// significant digits, DOUBLE with as many as it takes to read back the
// same value, in plain notation from 1e-15 to below 1e15 and as 1.5e15 or
// 1.5e-16 outside (measured on MariaDB 10.11 for every power of ten a
// FLOAT holds).
func appendFloat(b []byte, v float64, digits int) []byte {
	if v == 0 {
		return append(b, '0')
	}
	var buf [32]byte
	prec := -1
	if digits > 0 {
		prec = digits - 1
	}
	e := strconv.AppendFloat(buf[:0], v, 'e', prec, 64) // -d.ddde-XX
	if e[0] == '-' {
		b = append(b, '-')
		e = e[1:]
	}
	at := 0
	for e[at] != 'e' {
		at++
	}
	exp, _ := strconv.Atoi(string(e[at+1:]))
	var mant [24]byte
	m := append(mant[:0], e[0])
	if at > 1 {
		m = append(m, e[2:at]...)
	}
	for len(m) > 1 && m[len(m)-1] == '0' {
		m = m[:len(m)-1]
	}
	switch {
	case exp < -15 || exp >= 15:
		b = append(b, m[0])
		if len(m) > 1 {
			b = append(append(b, '.'), m[1:]...)
		}
		return strconv.AppendInt(append(b, 'e'), int64(exp), 10)
	case exp < 0:
		b = append(b, '0', '.')
		for range -exp - 1 {
			b = append(b, '0')
		}
		return append(b, m...)
	case len(m) <= exp+1:
		b = append(b, m...)
		for range exp + 1 - len(m) {
			b = append(b, '0')
		}
		return b
	}
	return append(append(append(b, m[:exp+1]...), '.'), m[exp+1:]...)
}

func intSize(typ byte) int {
	switch typ {
	case typeTiny:
		return 1
	case typeShort, typeYear:
		return 2
	case typeLong, typeInt24:
		return 4
	}
	return 8
}

func littleEndian(b []byte) uint64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// appendDateTime formats a binary DATE, DATETIME or TIMESTAMP (0, 4, 7 or
// 11 bytes: year(2) month day [hour minute second [microseconds(4)]]).
func appendDateTime(b, t []byte, c column) []byte {
	var year, month, day, hour, minute, second, micro int
	if len(t) >= 4 {
		year, month, day = int(binary.LittleEndian.Uint16(t)), int(t[2]), int(t[3])
	}
	if len(t) >= 7 {
		hour, minute, second = int(t[4]), int(t[5]), int(t[6])
	}
	if len(t) >= 11 {
		micro = int(binary.LittleEndian.Uint32(t[7:]))
	}
	b = appendPadded(b, year, 4)
	b = append(b, '-')
	b = appendPadded(b, month, 2)
	b = append(b, '-')
	b = appendPadded(b, day, 2)
	if c.typ == typeDate {
		return b
	}
	b = append(b, ' ')
	b = appendPadded(b, hour, 2)
	b = append(b, ':')
	b = appendPadded(b, minute, 2)
	b = append(b, ':')
	b = appendPadded(b, second, 2)
	return appendFraction(b, micro, c.decimals)
}

// appendTime formats a binary TIME (0, 8 or 12 bytes: negative days(4)
// hour minute second [microseconds(4)]) as [-]H:MM:SS, hours past 24
// counting the days.
func appendTime(b, t []byte, decimals byte) []byte {
	var days, hour, minute, second, micro int
	if len(t) >= 8 {
		if t[0] == 1 {
			b = append(b, '-')
		}
		days, hour, minute, second = int(binary.LittleEndian.Uint32(t[1:])), int(t[5]), int(t[6]), int(t[7])
	}
	if len(t) >= 12 {
		micro = int(binary.LittleEndian.Uint32(t[8:]))
	}
	b = appendPadded(b, days*24+hour, 2)
	b = append(b, ':')
	b = appendPadded(b, minute, 2)
	b = append(b, ':')
	b = appendPadded(b, second, 2)
	return appendFraction(b, micro, decimals)
}

// appendFraction appends the column's declared digits of the fraction of
// a second (none when it declares none, or an unfixed number: 31 or more).
func appendFraction(b []byte, micro int, decimals byte) []byte {
	if decimals == 0 || decimals > 6 {
		return b
	}
	b = append(b, '.')
	digits := appendPadded(nil, micro, 6)
	return append(b, digits[:decimals]...)
}

func appendPadded(b []byte, v, width int) []byte {
	var digits [20]byte
	s := strconv.AppendInt(digits[:0], int64(v), 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// lenencInt reads a length-encoded integer; k is 0 when p is too short.
func lenencInt(p []byte) (v uint64, k int) {
	if len(p) == 0 {
		return 0, 0
	}
	size := 0
	switch p[0] {
	case 0xfc:
		size = 2
	case 0xfd:
		size = 3
	case 0xfe:
		size = 8
	default:
		return uint64(p[0]), 1
	}
	if len(p) < 1+size {
		return 0, 0
	}
	return littleEndian(p[1 : 1+size]), 1 + size
}

// lenencBytes reads a length-encoded string and returns the rest of p.
func lenencBytes(p []byte) (v, rest []byte, ok bool) {
	n, k := lenencInt(p)
	if k == 0 || uint64(len(p)-k) < n {
		return nil, p, false
	}
	return p[k : k+int(n)], p[k+int(n):], true
}

func appendLenenc(b []byte, v uint64) []byte {
	switch {
	case v < 0xfb:
		return append(b, byte(v))
	case v < 1<<16:
		return append(b, 0xfc, byte(v), byte(v>>8))
	case v < 1<<24:
		return append(b, 0xfd, byte(v), byte(v>>8), byte(v>>16))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xfe), v)
}
