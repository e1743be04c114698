package gpu

import (
	"fmt"

	"github.com/geoknn/geoknn/cuda"
)

// The parameter types the table below is written in: the bindings' own
// (cuda.Param), so that loadEntries makes each argument block straight
// from its entry's list (cuda.NewArgsOf) and a setter that does not match
// the kernel is reported at launch. The table lives here, beside the
// wrappers that fill the blocks, rather than in internal/kernels, which
// the CPU engine and internal/index import for the launch constants and
// which therefore imports no CUDA binding.
const (
	u32 = cuda.U32 // .u32 / .s32 / .b32: int, unsigned int
	u64 = cuda.U64 // .u64 / .s64 / .b64: pointers, 64-bit integers
	f32 = cuda.F32 // .f32: float
	f64 = cuda.F64 // .f64: double
)

// signatures is every kernel entry's parameter list as its PTX declares it,
// and as the Go wrappers fill it (Args); TestSignaturesMatchPTX checks the
// two agree, entry for entry.
var signatures = map[string][]cuda.Param{
	"block_min_f64":  {u64, u64, u32, u64, u32, u32, u64, u64, u64},
	"block_min_f32":  {u64, u64, u32, u64, u32, u32, u64, u64, u64},
	"global_min_f64": {u64, u64, u32, u64, u32, u64, u64, u64, u64, u64, u64, u64},
	"global_min_f32": {u64, u64, u32, u64, u32, u64, u64, u64, u64, u64, u64, u64},
	"refine_f64":     {u64, u64, u64, u32, u64, u64, u64, u64},
	"refine_f32":     {u64, u64, u64, u32, u64, u64, u64, u64},

	"seed_block_min_f64": {u64, u64, u32, u64, u64, u32, u64, u64},
	"seed_block_min_f32": {u64, u64, u32, u64, u64, u32, u64, u64},
	"seed_global_min":    {u64, u64, u32, u64, u64},

	"grid_obs_prep_f64": {u64, u64, u32, u64},
	"grid_obs_prep_f32": {u64, u64, u32, u64},
	"grid_obs_keys":     {u64, u32, u32, f32, u32, u64, u64},

	"grid_obs_keys_cols_f64":    {u64, u64, u32, u32, f32, u32, u64, u64},
	"grid_obs_keys_cols_f32":    {u64, u64, u32, u32, f32, u32, u64, u64},
	"grid_obs_scatter_cols_f64": {u64, u64, u64, u32, u64, u64},
	"grid_obs_scatter_cols_f32": {u64, u64, u64, u32, u64, u64},

	"grid_ref_keys":    {u64, u32, u32, f32, u64, u64},
	"grid_scan_blocks": {u64, u64, u64},
	"grid_scan_sums":   {u64, u32},
	"grid_scan_add":    {u64, u64, u64},
	"grid_obs_scatter": {u64, u64, u32, u64, u64, u64},
	"grid_ref_scatter": {u64, u64, u32, u64, u64},
	"grid_runs_trim":   {u64, u64, u32, u64},
	"grid_query":       {u64, u32, u64, u64, u64, u32, f32, u64, u64, u64, u64},

	"replace_f64":    {u64, u64, u64, u32, u64, u64, u64, u64, u64, u64, u64, u64, u32},
	"replace_f32":    {u64, u64, u64, u32, u64, u64, u64, u64, u64, u64, u64, u64, u32},
	"count_changed":  {u64, u64, u32, u64, u64},
	"map_index":      {u64, u32, u64},
	"gather_patched": {u64, u64, u32, u64},

	"gather_f64":       {u64, u32, u64, u64, u64},
	"gather_f32":       {u64, u32, u64, u64, u64},
	"draw_replace_f64": {u32, u32, u32, f64, u64, u64, u32, u32, u64, u64, u64, u64, u64, u64, u64, u64, u32},
	"draw_replace_f32": {u32, u32, u32, f64, u64, u64, u32, u32, u64, u64, u64, u64, u64, u64, u64, u64, u32},

	"move_refs":     {u32, u64, u64, u64, u64, f64, u32, u64, u64},
	"valid_f64":     {u32, u64, u64, f64, f64, u64},
	"valid_f32":     {u32, u64, u64, f32, f32, u64},
	"go_twin_check": {u32, u64, u64},

	"grid_knn":    {u64, u32, u64, u64, u64, u32, f32, u64, u32, f64, u64, u64, u64},
	"grid_knn_8":  {u64, u32, u64, u64, u64, u32, f32, u64, u32, f64, u64, u64, u64},
	"grid_knn_16": {u64, u32, u64, u64, u64, u32, f32, u64, u32, f64, u64, u64, u64},
	"grid_within": {u64, u32, u64, u64, u64, u32, f32, u64, f64, u64, u64, u64, u64},

	"gen_sphere": {u64, u32, u64, u64, u64},
	"gen_seed":   {u64, u32, u64, u64, u64},

	"tree_query": {u64, u32, u64, u64, u64, u64, u64, u64},

	"cells_build":     {u32, u32, u64, u32, u32, u32, f32, f32, u64, u64, u64, u64, u64, u64, u64, u64, u64},
	"cells_query_f64": {u64, u64, u32, u32, u64, u64, u64, u64, u64, u64, u64},
	"cells_query_f32": {u64, u64, u32, u32, u64, u64, u64, u64, u64, u64, u64},
}

// signature returns the named entry's parameter list.
func signature(entry string) ([]cuda.Param, error) {
	sig, ok := signatures[entry]
	if !ok {
		return nil, fmt.Errorf("kernels: no entry %q", entry)
	}
	return sig, nil
}
