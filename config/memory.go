package config

import (
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/memlimit"
)

// MemoryBudget is the memory budget in bytes, the one set or the machine's share
// for hub or run (memlimit.Default), and where it came from.
func (c Config) MemoryBudget(hub bool) (int64, string) {
	if c.Memory.Budget != "" {
		if n, err := history.ParseSize(c.Memory.Budget); err == nil {
			return n, "memory.budget"
		}
	}
	m, from := memlimit.Machine()
	return memlimit.Default(hub, m), "a share of " + from
}
