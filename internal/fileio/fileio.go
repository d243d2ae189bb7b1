package fileio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// TooLargeError is a file over the limit its reader set.
type TooLargeError struct {
	What  string // the flag or argument the file came from, e.g. "--table"
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s %s: larger than the %s that %s reads (is it the right file?)", e.What, e.Path, formatBytes(e.Limit), e.What)
}

// formatBytes prints a limit in binary units (the limits are whole KiB,
// MiB or GiB).
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadFile reads the file path, at most limit bytes; what names the flag
// or argument it came from, for errors.
func ReadFile(path string, limit int64, what string) ([]byte, error) {
	r, err := Open(path, limit, what)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// Reader is an open file that fails with a *TooLargeError once more than
// its limit has been read.
type Reader struct {
	f     *os.File
	what  string
	limit int64
	left  int64
}

// Open opens the file path for reading at most limit bytes. A directory
// is refused here (reading one fails later, with a less clear message).
func Open(path string, limit int64, what string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s %s: a directory, not a file", what, path)
	}
	return &Reader{f: f, what: what, limit: limit, left: limit}, nil
}

func (r *Reader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		// One byte more tells a file of exactly limit bytes from a longer one.
		var one [1]byte
		n, err := r.f.Read(one[:])
		if n > 0 {
			return 0, &TooLargeError{r.what, r.f.Name(), r.limit}
		}
		return 0, err
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.f.Read(p)
	r.left -= int64(n)
	return n, err
}

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }

// WriteFile writes data to path whole or not at all (Create).
func WriteFile(path string, data []byte, perm os.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// File is an output being written: a temporary file in the target's
// directory, renamed over the target by Commit, removed by Abort.
type File struct {
	*os.File
	path string
	perm os.FileMode
	done bool
}

// Create starts writing path: nothing at path changes until Commit.
func Create(path string, perm os.FileMode) (*File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return nil, err
	}
	return &File{File: f, path: path, perm: perm}, nil
}

// Commit closes the temporary file and renames it to the target. On any
// failure the temporary file is removed and the target is left as it was.
func (f *File) Commit() error {
	if f.done {
		return errors.New("fileio: " + f.path + " committed or aborted already")
	}
	f.done = true
	err := f.Chmod(f.perm)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	return nil
}

// Abort drops what was written; the target is left as it was. Abort after
// Commit does nothing, so it can be deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	os.Remove(f.Name())
}

// CheckWritable says whether path can be written later (Create there, then
// a rename over it) without touching it: an existing file is opened for
// writing without truncation, a new one's directory is tried with a
// temporary file removed at once. Commands check their outputs before a
// long run, so a typo costs nothing, and the old file stays as it is until
// the new one is whole.
func CheckWritable(path string) error {
	if st, err := os.Stat(path); err == nil {
		if st.IsDir() {
			return fmt.Errorf("%s is a directory", path)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		return f.Close()
	}
	f, err := Create(path, 0o644)
	if err != nil {
		return err
	}
	f.Abort()
	return nil
}
