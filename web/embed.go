package web

import (
	"fmt"
	"net/http"
)

// embed serves /embed/<port>: one live board and no header, for another site's
// iframe (static/embed.html); a port is <club>.<port> on a league hub's page. The
// port need not have a board yet: the page waits for it, as the TV page does.
func (s *Server) embed(w http.ResponseWriter, r *http.Request) {
	port := r.PathValue("port")
	if _, ok := s.portOf(port); !ok {
		http.Error(w, fmt.Sprintf("embed: %q is no port name: want /embed/NAME (lowercase letters, digits, '-' and '_'), or /embed/CLUB.NAME on a league hub's page", port), http.StatusNotFound)
		return
	}
	serveHTML(w, "static/embed.html")
}

// clubsIndex serves /clubs on a league hub's page: its clubs, each with its
// boards and players, and a search by player or club (static/clubs.html); a
// club's page has none.
func (s *Server) clubsIndex(w http.ResponseWriter, r *http.Request) {
	if !s.delays.League() {
		http.Error(w, "/clubs: this page is a club's, not a league hub's: its boards are all on /", http.StatusNotFound)
		return
	}
	serveHTML(w, "static/clubs.html")
}

// clubPage serves /clubs/<club> on a league hub's page: the page of one club's
// tiles, which follows that club's events alone (static/index.html reads its
// address). A club the hub does not have, or another spelling of one, is a 404.
func (s *Server) clubPage(w http.ResponseWriter, r *http.Request) {
	if club := r.PathValue("club"); !s.isClub(club) {
		http.Error(w, fmt.Sprintf("/clubs/%.60q: no club of this league by that name (the index of its clubs: /clubs)", club), http.StatusNotFound)
		return
	}
	serveHTML(w, "static/index.html")
}
