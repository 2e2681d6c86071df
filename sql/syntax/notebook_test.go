package syntax

import (
	"strings"
	"testing"
)

func TestNotebookCRLFAndBOM(t *testing.T) {
	src := "\ufeff-- Databricks notebook source\r\n" +
		"SELECT 1\r\n" +
		"\r\n" +
		"-- COMMAND ----------\r\n" +
		"-- MAGIC %md\r\n" +
		"-- MAGIC text\r\n" +
		"-- COMMAND ----------\r\n" +
		"%sql\r\n" +
		"SELECT 2\r\n"
	f, err := ParseFile("nb.sql", src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Statements) != 2 || f.Statements[1].Position() != (Pos{"nb.sql", 9, 1}) {
		t.Fatalf("statements %v", f.Statements)
	}
	if len(f.Notes) != 1 || !strings.Contains(f.Notes[0].Text, "%md") || f.Notes[0].Pos.Line != 5 {
		t.Fatalf("notes %v", f.Notes)
	}
}

func TestNotNotebook(t *testing.T) {
	// the header must be the first line; elsewhere it is a comment
	f, err := ParseFile("x.sql", "SELECT 1\n-- Databricks notebook source\n-- COMMAND ----------\nSELECT 2", nil)
	if err == nil {
		t.Fatalf("want an error: without the header, a COMMAND line is a comment and the statements run together; got %v", f.Statements)
	}
}
