// Package domain holds what every other package speaks: values and their
// kinds (Value, Kind, Type, Schema), columnar batches (Column, Batch) and
// their versioned binary codec with its checksums, the JSON text of values
// (AppendJSON, ParseJSON), the declarations of a pipeline (Dataset, Flow,
// Query, Source, Sink, Graph), the events of the log (Event and its
// details), and coded errors (Error, Code, Problems). It imports nothing of
// sluice.
package domain
