package domain

// The codes of AUTO CDC flows.
const (
	CodeCDCNullKey         Code = "AUTOCDC_NULL_KEY"
	CodeCDCNullSequence    Code = "AUTOCDC_NULL_SEQUENCE"
	CodeCDCSequenceType    Code = "AUTOCDC_SEQUENCE_NOT_ORDERABLE"
	CodeCDCKeyDrift        Code = "AUTOCDC_KEY_DRIFT"
	CodeCDCSequenceDrift   Code = "AUTOCDC_SEQUENCE_DRIFT"
	CodeCDCStoredAsDrift   Code = "AUTOCDC_STORED_AS_DRIFT"
	CodeCDCInvalidClause   Code = "AUTOCDC_INVALID_DEFINITION"
	CodeCDCUnknownColumn   Code = "AUTOCDC_UNKNOWN_COLUMN"
	CodeCDCTargetNotStream Code = "AUTOCDC_TARGET_READ_AS_STREAM"
	CodeCDCSnapshotKey     Code = "AUTOCDC_SNAPSHOT_DUPLICATE_KEY"
	CodeCDCSnapshotVersion Code = "AUTOCDC_SNAPSHOT_VERSION_NOT_INCREASING"
	CodeCDCStateSpill      Code = "AUTOCDC_STATE_SPILL_FAILED"
	// CodeDedupStateSpill is a deduplication's, not an AUTO CDC flow's,
	// but its kin.
	CodeDedupStateSpill Code = "DEDUP_STATE_SPILL_FAILED"
)

func init() {
	for c, t := range map[Code]codeText{
		CodeCDCNullKey: {"a change has a NULL key column",
			"filter out the changes without a key in the flow's source (WHERE key IS NOT NULL), or fix them at the source; nothing of the batch was applied"},
		CodeCDCNullSequence: {"a change has a NULL sequence, so its place among the key's changes is unknown",
			"give every change a sequence (coalesce it in the source), or filter out those without one; nothing of the batch was applied"},
		CodeCDCSequenceType: {"the SEQUENCE BY expression is of a type that cannot be ordered",
			"sequence by a number, a string, a date, a timestamp, or a STRUCT of those (ordered field by field)"},
		CodeCDCKeyDrift: {"the keys of an AUTO CDC flow differ from the keys its target was built with",
			"run a full refresh of the target (sluice run --full-refresh TABLE), which rebuilds it from its sources with the new keys"},
		CodeCDCSequenceDrift: {"the type of the sequence differs from the one the target was built with",
			"cast the SEQUENCE BY expression to the old type, or run a full refresh of the target (sluice run --full-refresh TABLE)"},
		CodeCDCStoredAsDrift: {"the SCD type or the tracked columns differ from those the target was built with",
			"run a full refresh of the target (sluice run --full-refresh TABLE), which rebuilds it with the new definition"},
		CodeCDCInvalidClause: {"the clauses of an AUTO CDC flow contradict each other",
			"see the message for the clause to change"},
		CodeCDCUnknownColumn: {"an AUTO CDC clause names a column the flow's source or stored columns do not have",
			"name a column of the source; a key or a tracked column must also be stored (not left out by COLUMNS * EXCEPT)"},
		CodeCDCTargetNotStream: {"the target of an AUTO CDC flow is read as a stream; its rows are updated and deleted, not appended",
			"read it as a batch (in a materialized view), or read what each batch changed with sluice table TABLE --changes"},
		CodeCDCSnapshotKey: {"a snapshot holds a key more than once, so which row the table should hold is unknown",
			"make the snapshot's keys unique (deduplicate it in the source, or declare more key columns)"},
		CodeCDCStateSpill: {"the keys an AUTO CDC table holds beyond its memory budget could not be written to or read from the spill directory",
			"free space in the system's temporary directory (TMPDIR), or raise state_memory_mib in pipeline.yaml; nothing of the batch was applied"},
		CodeDedupStateSpill: {"the identities a deduplication remembers beyond its memory budget could not be written to or read from the spill directory",
			"free space in the system's temporary directory (TMPDIR), or raise state_memory_mib in pipeline.yaml; nothing of the batch was committed"},
		CodeCDCSnapshotVersion: {"a snapshot's version is not greater than the last one applied",
			"give each snapshot a version greater than the last (a Go snapshot function must return growing versions); the snapshot was not applied"},
	} {
		codeInfo[c] = t
	}
}
