// Package eventstore is sluice's log: an append-only sequence of events in an
// embedded Badger database, with everything derived from it kept beside it.
//
// Every state change of a pipeline is an event appended with [Store.Append].
// An Append is atomic: one Badger transaction holds the events (under keys
// 'L' seq), their index entries ('I'), and the writes every [Projector] makes
// for them ('P'). Readers see a committed Append entirely or not at all.
//
// Sequence numbers start at 1 and are consecutive: a committed Append never
// leaves a gap, a failed one never consumes seqs. One committer goroutine
// assigns them and groups concurrent Appends into one transaction (group
// commit), so that with sync writes on a crowd of writers shares one disk sync.
//
// Log entries of 64 KiB or more (micro-batches of rows) are kept in segment
// files beside Badger's, the tree holding a pointer to each: see
// [WithValueThreshold] and segments.go.
//
// Projections (checkpoints, table generations, and whatever extra projectors
// keep) are caches: [Store.RebuildProjections] drops them and folds the log
// again, [Store.VerifyProjections] proves the stored ones equal a fresh fold,
// byte for byte. The log alone decides what is true.
//
// Readers: [Store.Get] and [Store.Scan] read committed events, [Store.Tail]
// reads them and then follows new commits, [Store.WaitFor] waits for a seq.
// Committed events are also published on a watermill bus (see [Topic] and
// [Store.Subscribe]), best effort and after the fact: consumers that must not
// miss an event use Tail, which reads the log itself.
//
// Badger writes through memory-mapped files, and a write to such a file on a
// full disk kills the process (SIGBUS) instead of returning an error. So the
// committer keeps a reserve of free disk space (see [WithMinFreeBytes]): an
// Append that would eat into it fails with a retriable STORE_IO error, having
// written nothing, and Appends work again once space is freed. Badger's
// memtable size, which sets the default reserve, is [WithMemTableSize].
package eventstore
