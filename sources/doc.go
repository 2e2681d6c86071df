// Package sources holds the sources that bring rows into a pipeline:
// generated rows (Range) and files (Files: JSON lines and documents, CSV,
// Parquet, text), as read_files and Auto Loader read them. Every source
// reads exactly the range of a planned micro-batch, so that a micro-batch
// run again after a crash reads the same rows.
package sources
