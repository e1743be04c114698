// Package arrowio reads points from Parquet, GeoParquet and Arrow IPC
// (Feather) files and writes query answers in those formats, through
// github.com/apache/arrow-go (pure Go). It is apart from pointio so that
// programs that read only text do not carry the Arrow and Parquet
// libraries. Errors in a file's content are *pointio.InputError values
// naming the file and the row.
package arrowio
