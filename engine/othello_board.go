package engine

// OthelloBoardAfter returns the 8 rows of the board after an othello unit's command,
// as the Q command prints them (without their newlines): the unit's position with an
// M's move made; unchanged for L, Q, or a move that is illegal. It is for those who
// draw the board (the history's latest board per port); a unit that cannot be parsed
// is an error.
func OthelloBoardAfter(unit []byte) ([]string, error) {
	var u othelloUnit
	if err := u.parse(unit); err != nil {
		return nil, err
	}
	pos := u.pos
	if u.cmd == 'M' {
		pos.Play(u.sq) // an illegal move leaves the position as it was
	}
	text := pos.AppendBoard(make([]byte, 0, 72))
	rows := make([]string, 8)
	for i := range rows {
		rows[i] = string(text[i*9 : i*9+8])
	}
	return rows, nil
}
