// Package ranks is how the ranks of an MPI job split a query's
// observations, validate their answers and write one output: the part of
// knn run --mpi and knn simulate --mpi that needs no engine, so that the
// command and the root package's API can both use it. It imports the mpi
// bindings, pointio and validate, never the root package (a test holds it
// to that): points travel as radian columns (Points, which the root
// package's Points satisfy) and answers as stream.Answers.
//
// The contract, for every function that takes a communicator: every rank
// of the job calls it, in the same order, with the same settings, from
// the goroutine that initialised MPI (MPI_THREAD_FUNNELED). A failure on
// one rank is every rank's: the ranks learn it together (AllOK) and
// return an error, the failing rank its own and the others
// ErrAnotherRank, so that none waits in a collective the others left.
// Errors are returned, never panics; a done context stops every write.
//
//   - Run, Start, Locate (place.go, run.go, settings.go, cores.go): a rank
//     set up on its thread, its place on its node (its GPUs, its share of
//     the node's cores, the launcher's binding widened to it), every
//     rank's flags compared with rank 0's before any work
//     (SettingsError), and the job ended with MPI_Abort after a failure
//     (Abort), leaving rank 0 time to remove the output.
//   - Shares, OpenRows, AgreeRows, SpreadObs, Bcast, Scatter (split.go,
//     points.go): the observations split into one contiguous range a
//     rank (in whole Parquet row groups where the ranks write Parquet
//     together), read by every rank from its own rows of a .npy or
//     Parquet file, or scattered from rank 0; the references broadcast.
//   - Output, WriteOwn (output.go, parts.go, formats.go, own.go): the
//     ranks' answers written into one file, each rank its rows at their
//     offsets, byte for byte what one process writes, published whole by
//     rank 0 once every rank has synced (all or nothing); or each rank's
//     own file, for ranks that share no filesystem. togetherFor
//     (formats.go) is the one place that names the formats the ranks
//     write together (CSV, .npz, Parquet; Arrow IPC is gathered).
//   - GatherRows, GatherLists, GatherReports (gather.go): answers and
//     every rank's report line gathered to rank 0.
//   - Check (check.go): --validate of the rank's share of the one
//     process's sample, the ranks' verdicts summed.
package ranks
