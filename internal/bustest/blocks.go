package bustest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BlockMax is the most a file store's block of 4 MiB holds: nats-server closes a
// block at the record that passes its size.
const BlockMax = 4<<20 + 32<<10

// BlockFiles are the sizes of a stream's block files (*.blk) under a JetStream
// store dir, as nats-server wrote them: how its blocks are sized, seen from outside.
func BlockFiles(t testing.TB, store, stream string) []int64 {
	t.Helper()
	var blocks []int64
	dir := string(filepath.Separator) + stream + string(filepath.Separator)
	err := filepath.WalkDir(store, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, ".blk") || !strings.Contains(path, dir) {
			return err
		}
		fi, err := os.Stat(path)
		if err == nil {
			blocks = append(blocks, fi.Size())
		}
		return err
	})
	if err != nil {
		t.Fatalf("the block files of %s under %s: %v", stream, store, err)
	}
	return blocks
}
