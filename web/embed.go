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
