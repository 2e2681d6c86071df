package eventstore

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/sluicehq/sluice/domain"
)

// A store is held through a lock on its directory (flock, taken by Badger's
// open and, briefly, by prepareDir): exclusive to write, shared to read. When
// the lock is refused, the error names the processes that hold it, so that
// the user knows what to wait for or stop. Two sources name them:
//
//   - the holder file, beside Badger's LOCK: the writer records its pid,
//     command line and start once it holds the lock, and removes the file
//     when it closes the store. Readers write nothing (a store opened for
//     reading is never written), so the file names writers only; a file a
//     killed writer left behind is recognised as stale (its pid is gone, or
//     is another program now) and ignored.
//   - on Linux, /proc/locks: every flock on the directory with its pid and
//     whether it is shared (a reader) or exclusive (a writer), and
//     /proc/PID/cmdline for its command line. It is what names readers.

// holderName is the holder file in the store's directory.
const holderName = "LOCK.holder"

// holder is the content of the holder file.
type holder struct {
	PID   int       `json:"pid"`
	Args  []string  `json:"args"`
	Host  string    `json:"host,omitempty"`
	Since time.Time `json:"since"`
}

// writeHolder records this process as the writer of the store in dir. The
// caller holds the directory's exclusive lock. The file is advice for error
// messages: failing to write it is logged, not an error of the open.
func writeHolder(dir string, log zerolog.Logger) {
	host, _ := os.Hostname()
	b, err := json.Marshal(holder{PID: os.Getpid(), Args: os.Args, Host: host, Since: time.Now().UTC().Truncate(time.Second)})
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, holderName), append(b, '\n'), 0o644)
	}
	if err != nil {
		log.Debug().Err(err).Msg("could not write " + holderName + " (it only names this process in other processes' errors)")
	}
}

// removeHolder removes the holder file, while the caller still holds the
// lock: a process that finds the lock held and no holder file falls back on
// /proc/locks.
func removeHolder(dir string) { _ = os.Remove(filepath.Join(dir, holderName)) }

// lockHolder is a process holding a store's directory lock.
type lockHolder struct {
	pid     int
	writing bool // exclusive lock; false: shared (reading), or not known
	args    []string
	since   time.Time
}

// lockedError is the STORE_LOCKED error of a store in dir whose lock another
// process holds; cause (Badger's refusal, when it was Badger's open that
// found the lock taken) is kept for errors.Is but not shown: the message
// names the holders instead.
func lockedError(dir string, cause error) error {
	holders := lockHolders(dir)
	e := domain.Errorf(domain.CodeStoreLocked, "the storage in %s is in use by another process", dir)
	e.Cause = cause
	if len(holders) == 0 {
		return e.WithHint("wait for the other process using it (a sluice run, or a program with the store open) to finish, or stop it; then run the command again").
			AsRetriable()
	}
	var who, pids []string
	for _, h := range holders {
		who = append(who, h.String())
		pids = append(pids, strconv.Itoa(h.pid))
	}
	if len(holders) == 1 {
		e.Message += ": " + who[0]
	} else {
		e.Message = fmt.Sprintf("the storage in %s is in use by %d other processes: %s", dir, len(holders), strings.Join(who, "; "))
	}
	hint := "wait for it to finish, or stop it (kill " + strings.Join(pids, " ") + "); then run the command again"
	if len(holders) > 1 {
		hint = "wait for them to finish, or stop them (kill " + strings.Join(pids, " ") + "); then run the command again"
	}
	return e.WithHint(hint).AsRetriable()
}

func (h lockHolder) String() string {
	s := "pid " + strconv.Itoa(h.pid)
	if h.pid == os.Getpid() {
		s += " (this process)"
	}
	if h.writing {
		s += ", writing it"
	} else {
		s += ", reading it"
	}
	if len(h.args) > 0 {
		s += ": " + commandLine(h.args)
	}
	if !h.since.IsZero() {
		s += " (since " + h.since.Format(time.RFC3339) + ")"
	}
	return s
}

// commandLine renders args for a message: quoted where a shell would need
// it, cut short when long.
func commandLine(args []string) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`") {
			parts[i] = strconv.Quote(a)
		}
	}
	s := strings.Join(parts, " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// lockHolders names the processes holding dir's lock, as far as can be
// told: from /proc/locks where there is one, with the holder file's details
// for the writer; else from the holder file alone, when its process lives.
func lockHolders(dir string) []lockHolder {
	rec, recOK := readHolder(dir)
	locks, locksOK := procLocks(dir)
	if !locksOK {
		if recOK && alive(rec) {
			return []lockHolder{{pid: rec.PID, writing: true, args: rec.Args, since: rec.Since}}
		}
		return nil
	}
	for i := range locks {
		if recOK && locks[i].pid == rec.PID && locks[i].writing && matches(rec) {
			locks[i].args, locks[i].since = rec.Args, rec.Since
			continue
		}
		locks[i].args = procArgs(locks[i].pid)
	}
	return locks
}

func readHolder(dir string) (holder, bool) {
	var h holder
	b, err := os.ReadFile(filepath.Join(dir, holderName))
	if err != nil || json.Unmarshal(b, &h) != nil || h.PID <= 0 {
		return h, false
	}
	return h, true
}

// alive reports whether the holder file's process still runs, as far as can
// be told from here: on another host it is taken on trust.
func alive(h holder) bool {
	if host, _ := os.Hostname(); h.Host != "" && h.Host != host {
		return true
	}
	if err := syscall.Kill(h.PID, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return matches(h)
}

// matches reports whether the process h.PID runs the command h records,
// where /proc tells: a pid reused by another program is not the holder.
func matches(h holder) bool {
	args := procArgs(h.PID)
	return args == nil || slices.Equal(args, h.Args)
}

// procArgs is the command line of process pid, nil when it cannot be read.
func procArgs(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// procLocks lists the flocks held on dir (not the ones waited for), from
// Linux's /proc/locks, whose lines read
//
//	1: FLOCK  ADVISORY  WRITE 4242 fe:01:131085 0 EOF
//
// (the device's major and minor numbers in hex, the inode in decimal). ok is
// false where there is no /proc/locks.
func procLocks(dir string) (locks []lockHolder, ok bool) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, false
	}
	st, isUnix := info.Sys().(*syscall.Stat_t)
	if !isUnix {
		return nil, false
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return nil, false
	}
	defer f.Close()
	dev := uint64(st.Dev)
	// Linux's encoding of device numbers (glibc's gnu_dev_major/minor).
	major := (dev>>8)&0xfff | (dev>>32)&^uint64(0xfff)
	minor := dev&0xff | (dev>>12)&^uint64(0xff)
	want := fmt.Sprintf("%02x:%02x:%d", major, minor, uint64(st.Ino))
	seen := map[int]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" || fields[5] != want {
			continue // another kind of lock, a waiter ("->"), another file
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil || pid <= 0 || seen[pid] {
			continue
		}
		seen[pid] = true
		locks = append(locks, lockHolder{pid: pid, writing: fields[3] == "WRITE"})
	}
	return locks, sc.Err() == nil
}
