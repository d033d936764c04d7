package bus

import "github.com/nats-io/nats-server/v2/server"

// WrapServer makes a Server of a nats-server the test built itself, such as one not
// started yet.
func WrapServer(ns *server.Server) *Server { return &Server{ns: ns} }
