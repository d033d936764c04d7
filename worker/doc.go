// Package worker answers the bus: the `scoreboard` micro service's solve and dump
// endpoints, a queue per port and origin so that one flooding port cannot starve
// the others, the pool of solvers running package engine, the result records it
// publishes (and sends as replies), and the drain on stop, which answers or hands
// back every dump it took.
package worker
