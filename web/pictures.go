package web

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goclub/scoreboard/render"
)

// picture is one unit's picture and game record, drawn the first time each is
// asked for and then kept: a revision never changes, so it is drawn once however
// many viewers ask.
type picture struct {
	port, problem string
	seq, revision uint64
	name          string // pictureName's
	unit          []byte
	game          render.Game // the game record's game info
	kept          bool        // in its port's pictures (the hub's to read and write)

	svgOnce, sgfOnce sync.Once
	svg, sgf         []byte
	svgErr, sgfErr   error
}

// Bounds of the pictures the hub keeps (keptPictures a port), by their cost
// (pictureCost): a club's together, and the whole page's. Without them one club's
// 64 ports of large units held about 0.4 GB at a hub. A club's bound is 400 ports
// of ordinary units (a few KB each, and their drawings); the page's, eight clubs'.
const (
	maxPictureClubBytes = 16 << 20
	maxPicturePageBytes = 128 << 20
	// drawnAllowance is what a picture's drawing and game record may add to its
	// unit once asked for: a goscore picture is about 9 KB.
	drawnAllowance = 16 << 10
)

// pictureCost is what a kept picture counts for in the bounds: its unit, and its
// drawings once asked for.
func pictureCost(p *picture) int { return len(p.unit) + drawnAllowance }

// clubPictures are a club's kept pictures, oldest first (those no longer kept are
// skipped, and swept out once they are half), and their cost.
type clubPictures struct {
	queue       []*picture
	kept, bytes int
}

// keep counts p, just put in its port's pictures, in its club's and the page's.
func (h *hub) keep(p *picture) {
	club := clubOf(p.port)
	c := h.pics[club]
	if c == nil {
		c = &clubPictures{}
		h.pics[club] = c
	}
	p.kept = true
	c.queue = append(c.queue, p)
	c.kept++
	c.bytes += pictureCost(p)
	h.picBytes += pictureCost(p)
}

// unkeep counts p out, taken out of its port's pictures.
func (h *hub) unkeep(p *picture) {
	if !p.kept {
		return
	}
	p.kept = false
	club := clubOf(p.port)
	c := h.pics[club]
	c.kept--
	c.bytes -= pictureCost(p)
	h.picBytes -= pictureCost(p)
	if c.kept == 0 {
		delete(h.pics, club)
	} else if len(c.queue) > 2*c.kept+16 {
		c.queue = slices.DeleteFunc(c.queue, func(q *picture) bool { return !q.kept })
	}
}

// boundPictures forgets the oldest pictures of club while it keeps more than its
// bound, then the oldest of the club that keeps most while the page does: a club
// that floods loses its own, never another's that keeps less. A forgotten
// picture's address is not found (as a port's fifth latest is).
func (h *hub) boundPictures(club string) {
	for c := h.pics[club]; c != nil && c.bytes > maxPictureClubBytes; c = h.pics[club] {
		h.forgetOldest(c)
	}
	for h.picBytes > maxPicturePageBytes {
		var most *clubPictures
		for _, c := range h.pics {
			if most == nil || c.bytes > most.bytes {
				most = c
			}
		}
		h.forgetOldest(most)
	}
}

// forgetOldest takes c's oldest kept picture out of its port's.
func (h *hub) forgetOldest(c *clubPictures) {
	for len(c.queue) > 0 {
		p := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		if !p.kept {
			continue
		}
		if s := h.ports[p.port]; s != nil {
			s.pictures = slices.DeleteFunc(s.pictures, func(q *picture) bool { return q == p })
		}
		h.unkeep(p)
		return
	}
}

// draws counts the pictures and game records drawn (the hub's internal test holds
// it to once per unit).
var draws atomic.Uint64

func (p *picture) SVG() ([]byte, error) {
	p.svgOnce.Do(func() {
		draws.Add(1)
		p.svg, p.svgErr = render.SVG(p.problem, p.unit)
	})
	return p.svg, p.svgErr
}

func (p *picture) SGF() ([]byte, error) {
	p.sgfOnce.Do(func() {
		draws.Add(1)
		p.sgf, p.sgfErr = render.SGFGame(p.problem, p.unit, p.game)
	})
	return p.sgf, p.sgfErr
}

// immutable is the Cache-Control of an address whose answer never changes: a
// picture by revision, a kept unit by its stream number. A browser, or a caching
// proxy in front of the page, serves it for a year without asking again.
const immutable = "public, max-age=31536000, immutable"

// pictureName names a unit's picture and game record: the bucket's revision of its
// board and a hash of what is drawn. The revision alone is not enough for an
// address cached for a year: a history started again from an empty state directory
// (or another club's hub) numbers its revisions from 1 again, and a browser or proxy
// would show the old picture under the new board.
func pictureName(problem string, unit []byte, revision uint64) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(problem))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write(unit)
	return strconv.FormatUint(revision, 10) + "-" + strconv.FormatUint(h.Sum64(), 36)
}

// pictureFile serves /pictures/<port>/<name>.svg and .sgf: a board's unit,
// cacheable for good. A unit the hub no longer holds (the port's latest few) is
// not found, and that answer is not cached: the page reads the newer board's
// address from its events.
func (s *Server) pictureFile(w http.ResponseWriter, r *http.Request) {
	port, file := r.PathValue("port"), r.PathValue("file")
	name, ext, _ := strings.Cut(file, ".")
	if _, ok := s.portOf(port); !ok || name == "" || (ext != "svg" && ext != "sgf") {
		notFound(w, "want /pictures/<port>/<name>.svg or .sgf, as a board's picture and sgf fields give them")
		return
	}
	p := s.hub.picture(r.Context(), port, name)
	if p == nil {
		notFound(w, fmt.Sprintf("port %q has no unit %s now: /api/boards gives each port's latest", port, name))
		return
	}
	s.servePicture(w, r, p, ext, immutable)
}

// servePicture writes p's picture (ext "svg") or game record ("sgf") with the
// revision as its ETag, so a client that has it gets 304. The ETag is weak: the
// same picture, gzipped or not, is the same picture.
func (s *Server) servePicture(w http.ResponseWriter, r *http.Request, p *picture, ext, cacheControl string) {
	if ext == "sgf" && !render.HasSGF(p.problem) {
		notFound(w, fmt.Sprintf("port %q: %s units have no game record", p.port, p.problem))
		return
	}
	draw, ctype, name := p.SVG, "image/svg+xml", ""
	if ext == "sgf" {
		draw, ctype = p.SGF, "application/x-go-sgf; charset=utf-8"
		name = fmt.Sprintf("%s-%d.sgf", p.port, p.seq)
	}
	data, err := draw()
	if err != nil {
		notFound(w, fmt.Sprintf("port %q unit %d (%s): %v", p.port, p.seq, p.problem, err))
		return
	}
	serveCached(w, r, `W/"`+p.name+`"`, cacheControl, ctype, name, data)
}

// serveCached writes data with an ETag and a Cache-Control; a request that has
// that ETag already (If-None-Match) gets 304 and no body. name, when set, is the
// file name a download is given.
func serveCached(w http.ResponseWriter, r *http.Request, etag, cacheControl, ctype, name string, data []byte) {
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", cacheControl)
	h.Set("Content-Type", ctype)
	if name != "" {
		h.Set("Content-Disposition", fmt.Sprintf("inline; filename=%q", name))
	}
	// ServeContent answers If-None-Match (weakly, as RFC 9110 says for it) and
	// ranges; no modification time, so the ETag alone decides.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
}

// notFound is a 404 nobody keeps: the address may answer later, or another one does.
func notFound(w http.ResponseWriter, msg string) {
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, msg, http.StatusNotFound)
}
