package engine

// replay: replays a game and scores it (seed 001, Go by Cormack). A unit is a header
// "n m" and m placements B(x,y) / W(x,y) in centred coordinates; the answer is "B W":
// vacant points owned plus opponent stones captured.

const (
	replayName = "replay"
	// replayMaxMoves bounds m. A 19x19 game of 10000 placements is far beyond any
	// real one, and the framer holds one unit of at most that many lines.
	replayMaxMoves = 10000
	// replayMaxLine fits any header or placement with generous white space.
	replayMaxLine = 80
)

func init() { Register(replayProblem{}) }

type replayProblem struct{}

func (replayProblem) Name() string { return replayName }

func (replayProblem) Limits() Limits {
	return Limits{
		MaxLine: replayMaxLine, MaxUnit: (1 + replayMaxMoves) * (replayMaxLine + 1),
		// Vacant points owned plus stones captured, each at most every point or move.
		MaxAnswer: maxScoreLine(19*19 + replayMaxMoves),
	}
}

func (replayProblem) NewFramer() Framer { return &replayFramer{} }

func (replayProblem) Append(dst, unit []byte) ([]byte, error) {
	var g ReplayGame
	if err := g.Play(unit); err != nil {
		return dst, err
	}
	return g.Score().AppendText(dst), nil
}

func (replayProblem) Solve(unit []byte) (Answer, error) {
	var g ReplayGame
	if err := g.Play(unit); err != nil {
		return nil, err
	}
	return ReplayAnswer{BoardScore: g.Score(), game: g}, nil
}

// ReplayGame is the position of a replayed game and the stones each side captured.
type ReplayGame struct {
	N            int
	Black, White boardRows
	// CapturedByBlack counts white stones black captured; CapturedByWhite black ones.
	CapturedByBlack, CapturedByWhite int
}

// replayHeader parses a line "n m": exactly two integers.
func replayHeader(line []byte) (n, m int, ok bool) {
	// A placement starts with its colour: settle the usual line at its first byte.
	if i := boardSkipSpace(line, 0); i < len(line) && line[i]-'0' > 9 && line[i] != '-' && line[i] != '+' {
		return 0, 0, false
	}
	t1, rest := boardNextToken(line)
	t2, rest := boardNextToken(rest)
	t3, _ := boardNextToken(rest)
	if len(t3) != 0 {
		return 0, 0, false
	}
	n, ok1 := boardAtoi(t1)
	m, ok2 := boardAtoi(t2)
	return n, m, ok1 && ok2
}

// Play replays one unit. Errors are *InputError with the line counted from the
// header (1).
func (g *ReplayGame) Play(unit []byte) error {
	*g = ReplayGame{}
	header, rest, ok := boardNextLine(unit)
	if !ok {
		return Errorf(replayName, 0, "empty unit: want a header \"n m\" and m placements")
	}
	var b replayGroups
	m, err := g.begin(header, &b)
	if err != nil {
		return err
	}
	for i := 0; i < m; i++ {
		var line []byte
		line, rest, ok = boardNextLine(rest)
		if !ok {
			return Errorf(replayName, i+1, "the game ends after %d of %d placements", i, m)
		}
		if err := g.move(i+2, line, &b); err != nil {
			return err
		}
	}
	if len(rest) > 0 {
		return Errorf(replayName, m+2, "unexpected line after the %d placements", m)
	}
	return nil
}

// begin starts the game of a header line: an empty board (its groups in b), and the
// number of placements that follow.
func (g *ReplayGame) begin(header []byte, b *replayGroups) (m int, err error) {
	*g = ReplayGame{}
	n, m, ok := replayHeader(header)
	switch {
	case !ok:
		return 0, Errorf(replayName, 1, "%s is not a header \"n m\"", boardQuote(header))
	case n < 3 || n > boardMax || n%2 == 0:
		return 0, Errorf(replayName, 1, "board size %d: want an odd number from 3 to 19", n)
	case m < 0 || m > replayMaxMoves:
		return 0, Errorf(replayName, 1, "%d placements: want 0 to %d", m, replayMaxMoves)
	}
	g.N = n
	b.reset(n)
	return m, nil
}

// replayParseMove parses "B(x,y)" or "W(x,y)", allowing white space around the
// line and inside the parentheses, in one pass.
func replayParseMove(s []byte) (white bool, x, y int, ok bool) {
	i := boardSkipSpace(s, 0)
	if i+1 >= len(s) || (s[i] != 'B' && s[i] != 'W') || s[i+1] != '(' {
		return false, 0, 0, false
	}
	white = s[i] == 'W'
	if x, i, ok = boardParseInt(s, boardSkipSpace(s, i+2)); !ok {
		return false, 0, 0, false
	}
	if i = boardSkipSpace(s, i); i >= len(s) || s[i] != ',' {
		return false, 0, 0, false
	}
	if y, i, ok = boardParseInt(s, boardSkipSpace(s, i+1)); !ok {
		return false, 0, 0, false
	}
	if i = boardSkipSpace(s, i); i >= len(s) || s[i] != ')' {
		return false, 0, 0, false
	}
	return white, x, y, boardSkipSpace(s, i+1) == len(s)
}

// replayStride is the row length of replayGroups' point arrays: a 19x19 board with a
// border column and row around it, so that every point of the board has four
// neighbours in the arrays and no move needs a bounds check.
const replayStride = boardMax + 2

// replayGroups keeps the groups of a game as it is played, so that no placement
// searches the board: each stone knows its group, each group its stones (a circular
// list) and its pseudo-liberties (empty neighbours counted once for each stone next
// to them, so zero exactly when the group has no liberty). A placement touches its
// four neighbours; a merge relabels the smaller group; a capture walks the captured
// stones. The arrays are only read at points the colour says hold a stone, so
// starting a game only resets the colours.
type replayGroups struct {
	colour [replayStride * replayStride]uint8 // replayEmpty, a colour, or replayEdge
	group  [replayStride * replayStride]uint16
	next   [replayStride * replayStride]uint16
	libs   [replayStride * replayStride]int32 // at a group's root: its pseudo-liberties
	size   [replayStride * replayStride]int32 // at a group's root: its stones
}

const (
	replayEmpty uint8 = iota
	replayBlack
	replayWhite
	replayEdge
)

// reset makes the board an empty n x n one.
func (b *replayGroups) reset(n int) {
	for i := range b.colour {
		b.colour[i] = replayEdge
	}
	for r := 1; r <= n; r++ {
		clear(b.colour[r*replayStride+1 : r*replayStride+1+n])
	}
}

// merge joins the groups whose roots are a and b (a != b), relabelling the smaller.
func (b *replayGroups) merge(a, o uint16) uint16 {
	if b.size[a] < b.size[o] {
		a, o = o, a
	}
	for s := o; ; {
		b.group[s] = a
		if s = b.next[s]; s == o {
			break
		}
	}
	b.next[a], b.next[o] = b.next[o], b.next[a]
	b.size[a] += b.size[o]
	b.libs[a] += b.libs[o]
	return a
}

// capture takes the group whose root is g off the board (and off the bitboard set
// stones): each removed stone gives a liberty to the groups of colour own next to it.
func (b *replayGroups) capture(g uint16, own uint8, stones *boardRows) int {
	for s := g; ; {
		b.colour[s] = replayEmpty
		r, c := int(s)/replayStride-1, int(s)%replayStride-1
		stones[r] &^= 1 << uint(c)
		for _, q := range [4]uint16{s - 1, s + 1, s - replayStride, s + replayStride} {
			if b.colour[q] == own {
				b.libs[b.group[q]]++
			}
		}
		if s = b.next[s]; s == g {
			break
		}
	}
	return int(b.size[g])
}

// replayPoint reads the placement on unit line ln of a game on an n x n board: its
// colour, and its row and column counted from 0.
func replayPoint(ln int, line []byte, n int) (white bool, r, c int, err error) {
	white, x, y, ok := replayParseMove(line)
	if !ok {
		return false, 0, 0, Errorf(replayName, ln, "%s: want B(x,y) or W(x,y)", boardQuote(line))
	}
	h := (n - 1) / 2
	if x < -h || x > h || y < -h || y > h {
		return false, 0, 0, Errorf(replayName, ln, "%s: (%d,%d) is off the %dx%d board (coordinates -%d..%d)",
			boardQuote(textTrim(line)), x, y, n, n, h, h)
	}
	return white, y + h, x + h, nil
}

// move plays the placement on unit line ln, with the game's groups in b.
func (g *ReplayGame) move(ln int, line []byte, b *replayGroups) error {
	white, r, c, err := replayPoint(ln, line, g.N)
	if err != nil {
		return err
	}
	p := uint16((r+1)*replayStride + c + 1)
	if b.colour[p] != replayEmpty {
		return Errorf(replayName, ln, "%s: the point is occupied", boardQuote(textTrim(line)))
	}
	own, opp, captured := &g.Black, &g.White, &g.CapturedByBlack
	col, other := replayBlack, replayWhite
	if white {
		own, opp, captured = &g.White, &g.Black, &g.CapturedByWhite
		col, other = replayWhite, replayBlack
	}
	own[r] |= 1 << uint(c)
	b.colour[p] = col
	b.group[p], b.next[p], b.size[p] = p, p, 1
	var libs int32
	nbrs := [4]uint16{p - 1, p + 1, p - replayStride, p + replayStride}
	for _, q := range nbrs {
		if b.colour[q] == replayEmpty {
			libs++
		}
	}
	b.libs[p] = libs
	root := p
	for _, q := range nbrs {
		switch b.colour[q] {
		case col:
			// p was a liberty of q's group, counted once for q.
			q := b.group[q]
			b.libs[q]--
			if q != root {
				root = b.merge(root, q)
			}
		case other:
			q := b.group[q]
			if b.libs[q]--; b.libs[q] == 0 {
				*captured += b.capture(q, col, opp)
			}
		}
	}
	if b.libs[root] == 0 {
		return Errorf(replayName, ln, "%s is suicide: it captures nothing and leaves its group no liberty",
			boardQuote(textTrim(line)))
	}
	return nil
}

// Score is each side's vacant points owned plus the opponent stones it captured.
func (g *ReplayGame) Score() BoardScore {
	ob, ow := boardOwned(&g.Black, &g.White, g.N)
	return BoardScore{Black: ob + g.CapturedByBlack, White: ow + g.CapturedByWhite}
}

// replayFramer cuts a stream into games: a header "n m" and m lines. After a bad
// header it skips to the next line that looks like a header (two integers), which a
// placement never does.
type replayFramer struct {
	line     int    // stream lines fed so far
	start    int    // stream line of the open game's header; 0 when none is open
	want     int    // placements the open game still expects
	lost     int    // stream line of the open game's first dropped line, or 0
	skipping bool   // after a bad header, until a header-like line
	buf      []byte // the open game's text

	// With an answer sink the open game is played as its lines arrive, with the
	// code Append plays a unit with, instead of being kept as text.
	sink   *[]byte
	game   ReplayGame
	groups replayGroups
	err    error // the open game's first error, its line counted from the header
}

func (f *replayFramer) answerInto(out *[]byte) { f.sink = out }

func (f *replayFramer) Feed(dst []Frame, line []byte) []Frame {
	f.line++
	if f.start != 0 {
		if _, _, ok := replayHeader(line); !ok {
			return f.placement(dst, line)
		}
		// A placement never looks like a header: the game was cut short, and this
		// line starts the next one.
		got := f.line - f.start - 1
		dst = append(dst, Frame{Line: f.start, Err: Errorf(replayName, f.start,
			"game cut short after %d of %d placements by the header at line %d", got, got+f.want, f.line)})
		f.start, f.want, f.lost = 0, 0, 0
	}
	if line == nil {
		if !f.skipping {
			f.skipping = true
			dst = append(dst, Frame{Line: f.line, Err: Errorf(replayName, f.line,
				"line dropped (too long or unreadable); skipping to the next header")})
		}
		return dst
	}
	if textBlank(line) {
		return dst
	}
	n, m, ok := replayHeader(line)
	if !ok {
		if !f.skipping {
			f.skipping = true
			dst = append(dst, Frame{Line: f.line, Err: Errorf(replayName, f.line,
				"%s is not a header \"n m\"; skipping to the next header", boardQuote(line))})
		}
		return dst
	}
	f.skipping = false
	if n == 0 && m == 0 {
		return dst // the end of one input; another may follow
	}
	if m < 0 || m > replayMaxMoves {
		f.skipping = true
		return append(dst, Frame{Line: f.line, Err: Errorf(replayName, f.line,
			"%d placements: want 0 to %d; skipping to the next header", m, replayMaxMoves)})
	}
	f.start, f.want, f.lost = f.line, m, 0
	if f.sink != nil {
		_, f.err = f.game.begin(line, &f.groups)
	} else {
		f.buf = append(append(f.buf[:0], line...), '\n')
	}
	if m == 0 {
		dst = f.emit(dst)
	}
	return dst
}

// placement takes a line of the open game.
func (f *replayFramer) placement(dst []Frame, line []byte) []Frame {
	switch {
	case line == nil:
		if f.lost == 0 {
			f.lost = f.line
		}
	case f.sink == nil:
		f.buf = append(f.buf, line...)
		f.buf = append(f.buf, '\n')
	case f.err == nil && f.lost == 0:
		f.err = f.game.move(f.line-f.start+1, line, &f.groups)
	}
	f.want--
	if f.want == 0 {
		dst = f.emit(dst)
	}
	return dst
}

func (f *replayFramer) emit(dst []Frame) []Frame {
	switch {
	case f.lost != 0:
		dst = append(dst, Frame{Line: f.start, Err: Errorf(replayName, f.lost,
			"line %d of the game at line %d was dropped (too long or unreadable)", f.lost-f.start+1, f.start)})
	case f.sink == nil:
		dst = append(dst, Frame{Line: f.start, Unit: f.buf})
	case f.err != nil:
		dst = append(dst, Frame{Line: f.start, Err: Rebase(f.err, f.start)})
	default:
		*f.sink = f.game.Score().AppendText(*f.sink)
	}
	f.start, f.want, f.lost = 0, 0, 0
	return dst
}

func (f *replayFramer) End(dst []Frame) []Frame {
	if f.start != 0 {
		got := f.line - f.start
		dst = append(dst, Frame{Line: f.start, Err: Errorf(replayName, f.start,
			"game cut short after %d of %d placements by the end of input", got, got+f.want)})
	}
	f.start, f.want, f.lost, f.skipping = 0, 0, 0, false
	return dst
}

func (f *replayFramer) Reset() int {
	n := 0
	if f.start != 0 {
		n = f.line - f.start + 1
	}
	*f = replayFramer{buf: f.buf[:0], sink: f.sink}
	return n
}
