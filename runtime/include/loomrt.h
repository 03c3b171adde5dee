/* loomrt.h - the C ABI of the Loom runtime (libloomrt.so).
 *
 * The runtime executes what the Loom compiler produces: it initialises MPI,
 * describes the device grid, owns tensors (opaque handles, 64-byte aligned
 * row-major data), reads and writes .npy and ONNX TensorProto (.pb) files,
 * cuts the shard of a global tensor that belongs to a rank (reading only
 * the bytes of that shard from a file), loads compiled artifacts
 * (manifest.json + program.so) and provides the collectives the compiled
 * program calls back into. It depends on MPI and the C library only (no MLIR,
 * no LLVM) so that it builds and ships alone.
 *
 * Conventions
 *  - Every function that can fail returns a loomrt_status (LOOMRT_OK == 0);
 *    the message of the last failure on the calling thread is returned by
 *    loomrt_last_error(). No C++ exception ever crosses this interface.
 *  - Handles are opaque; they are created by *_create/*_open/*_read functions
 *    and released by the matching *_destroy/*_close function.
 *  - dtype codes (loomrt_dtype) are the manifest's dtype list in order.
 *  - A "split" describes how a tensor is sharded over the grid: for each
 *    dimension d, split_naxes[d] grid axes (major to minor) packed into
 *    split_axes[d], axis i in bits [8*i, 8*i+8) - the same packing as the
 *    collectives below. A replicated dimension has split_naxes[d] == 0.
 *    A rank's grid coordinate is the row-major delinearisation of its world
 *    rank over the grid shape; along dim d the shard index is the row-major
 *    linearisation of the coordinates on the listed axes, and the slice
 *    starts at shard_index * local_shape[d].
 *
 * The collective callbacks at the end (loomrt_all_gather ... loomrt_recv)
 * are called by compiled programs; they never return an error: on any
 * failure they print "loom-run: rank R: <what failed>" and MPI_Abort.
 */
#ifndef LOOM_RUNTIME_INCLUDE_LOOMRT_H
#define LOOM_RUNTIME_INCLUDE_LOOMRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define LOOMRT_API __attribute__((visibility("default")))
#else
#define LOOMRT_API
#endif

/* ---- status and errors -------------------------------------------------- */

typedef enum loomrt_status {
  LOOMRT_OK = 0,
  LOOMRT_ERR_INVALID = 1, /* bad argument, shape, dtype or manifest */
  LOOMRT_ERR_IO = 2,      /* a file could not be opened/read/written */
  LOOMRT_ERR_FORMAT = 3,  /* a file is not a valid .npy/.pb/manifest */
  LOOMRT_ERR_MPI = 4,     /* an MPI call failed */
  LOOMRT_ERR_NOMEM = 5,   /* allocation failed */
  LOOMRT_ERR_STATE = 6,   /* called in the wrong state (e.g. before init) */
  LOOMRT_ERR_LOAD = 7,    /* program library or symbol could not be loaded */
  LOOMRT_ERR_INTERNAL = 8 /* an unexpected internal failure */
} loomrt_status;

/* Message of the last failure on this thread ("" if none). Valid until the
 * next loomrt call on the same thread. */
LOOMRT_API const char *loomrt_last_error(void);

/* ---- dtypes ------------------------------------------------------------- */

typedef enum loomrt_dtype {
  LOOMRT_FLOAT32 = 0,
  LOOMRT_FLOAT64 = 1,
  LOOMRT_FLOAT16 = 2,
  LOOMRT_BFLOAT16 = 3,
  LOOMRT_INT8 = 4,
  LOOMRT_INT16 = 5,
  LOOMRT_INT32 = 6,
  LOOMRT_INT64 = 7,
  LOOMRT_UINT8 = 8,
  LOOMRT_UINT16 = 9,
  LOOMRT_UINT32 = 10,
  LOOMRT_UINT64 = 11,
  LOOMRT_BOOL = 12, /* one byte, 0 or 1 */
  LOOMRT_NUM_DTYPES = 13
} loomrt_dtype;

/* Reduction ops of the collectives. */
typedef enum loomrt_op {
  LOOMRT_SUM = 0,
  LOOMRT_MAX = 1,
  LOOMRT_MIN = 2,
  LOOMRT_PROD = 3
} loomrt_op;

/* Size in bytes of one element; 0 for an unknown code. */
LOOMRT_API int64_t loomrt_dtype_size(int32_t dtype);
/* Manifest name ("float32", ...); NULL for an unknown code. */
LOOMRT_API const char *loomrt_dtype_name(int32_t dtype);
/* Code of a manifest name, or -1. */
LOOMRT_API int32_t loomrt_dtype_from_name(const char *name);

/* ---- process, MPI and grid ---------------------------------------------- */

/* Initialises MPI (MPI_Init_thread, MPI_THREAD_MULTIPLE requested) unless
 * it is already initialised; works as a singleton without a launcher.
 * argc/argv may be NULL. Sets MPI_ERRORS_RETURN on MPI_COMM_WORLD. */
LOOMRT_API loomrt_status loomrt_init(int *argc, char ***argv);
/* Frees communicators and finalises MPI if loomrt_init initialised it. */
LOOMRT_API loomrt_status loomrt_finalize(void);
/* World rank and size (0 and 1 before init). */
LOOMRT_API int loomrt_world_rank(void);
LOOMRT_API int loomrt_world_size(void);
/* MPI_Abort(MPI_COMM_WORLD, code); exits the process if MPI is not running. */
LOOMRT_API void loomrt_abort(int code);
/* MPI_Barrier on the world. */
LOOMRT_API loomrt_status loomrt_barrier(void);

/* Sets the device grid. ndims == 0 is the single-device grid. The grid may
 * differ from the world size (e.g. to compute shards offline); collectives
 * abort unless its product equals the world size. Frees cached
 * communicators. */
LOOMRT_API loomrt_status loomrt_set_grid(int64_t ndims, const int64_t *shape);
/* Number of grid axes (0 before loomrt_set_grid). */
LOOMRT_API int64_t loomrt_grid_ndims(void);
/* Grid coordinate of a world rank, written to coords[0..ndims). */
LOOMRT_API loomrt_status loomrt_grid_coords(int64_t world_rank,
                                            int64_t *coords);

/* ---- timing -------------------------------------------------------------- */

/* Monotonic clock (CLOCK_MONOTONIC) in nanoseconds. */
LOOMRT_API int64_t loomrt_now_ns(void);

/* ---- tensors --------------------------------------------------------------
 */

typedef struct loomrt_tensor loomrt_tensor;

/* New zero-filled tensor, data 64-byte aligned. rank may be 0 (a scalar). */
LOOMRT_API loomrt_status loomrt_tensor_create(int32_t dtype, int64_t rank,
                                              const int64_t *shape,
                                              loomrt_tensor **out);
LOOMRT_API void loomrt_tensor_destroy(loomrt_tensor *t);
LOOMRT_API int32_t loomrt_tensor_dtype(const loomrt_tensor *t);
LOOMRT_API int64_t loomrt_tensor_rank(const loomrt_tensor *t);
/* Pointer to rank dims, owned by the tensor. */
LOOMRT_API const int64_t *loomrt_tensor_shape(const loomrt_tensor *t);
LOOMRT_API int64_t loomrt_tensor_numel(const loomrt_tensor *t);
LOOMRT_API int64_t loomrt_tensor_nbytes(const loomrt_tensor *t);
LOOMRT_API void *loomrt_tensor_data(loomrt_tensor *t);
/* sum += part, elementwise over as many elements: `sum` is float32 or
 * float64 and `part` of its dtype, or float16 or bfloat16 into a float32
 * sum (widened exactly first), so that 16-bit values sum in float32. */
LOOMRT_API loomrt_status loomrt_tensor_accumulate(loomrt_tensor *sum,
                                                  const loomrt_tensor *part);
/* Copies `from` into `to`, as many elements, of the same dtype or
 * converted from float32 to float16 or bfloat16 (rounding to nearest
 * even). */
LOOMRT_API loomrt_status loomrt_tensor_round(const loomrt_tensor *from,
                                             loomrt_tensor *to);

/* ---- files: .npy and ONNX TensorProto .pb ---------------------------------
 */

/* File format from the extension: 0 = .npy, 1 = .pb, -1 = unknown. */
LOOMRT_API int loomrt_file_format(const char *path);

/* Reads a .npy file (format 1.0/2.0/3.0, little-endian, C order). Fortran
 * order and big-endian data are rejected. bfloat16 has no numpy dtype: it is
 * stored as '<u2' (the raw bits); reading gives LOOMRT_UINT16. */
LOOMRT_API loomrt_status loomrt_npy_read(const char *path, loomrt_tensor **out);
/* Writes a .npy file atomically (temp file in the same directory, then
 * rename); on failure no file is left behind. */
LOOMRT_API loomrt_status loomrt_npy_write(const char *path,
                                          const loomrt_tensor *t);

/* Reads an ONNX TensorProto. name_out (may be NULL) receives the tensor's
 * name, truncated to name_cap bytes including the terminating NUL. */
LOOMRT_API loomrt_status loomrt_pb_read(const char *path, loomrt_tensor **out,
                                        char *name_out, size_t name_cap);
/* Writes an ONNX TensorProto (dims, data_type, name, raw_data) atomically. */
LOOMRT_API loomrt_status loomrt_pb_write(const char *path,
                                         const loomrt_tensor *t,
                                         const char *name);

/* Reads or writes by extension (.npy or .pb). */
LOOMRT_API loomrt_status loomrt_tensor_read(const char *path,
                                            loomrt_tensor **out);
LOOMRT_API loomrt_status loomrt_tensor_write(const char *path,
                                             const loomrt_tensor *t,
                                             const char *name);

/* Describes a tensor file without reading its data: dtype, rank, dims
 * (shape must hold 64 entries) and, when the data is stored as raw
 * little-endian row-major bytes at a known position, the byte offset of the
 * data in data_offset (else -1: the file must be read whole). */
#define LOOMRT_MAX_RANK 64
LOOMRT_API loomrt_status loomrt_file_info(const char *path, int32_t *dtype,
                                          int64_t *rank, int64_t *shape,
                                          int64_t *data_offset);

/* ---- shards ----------------------------------------------------------------
 */

/* Computes the slice of a global tensor that world_rank holds under the
 * current grid: offsets[d] and local_shape[d] for each of rank dims.
 * Fails if a dimension is not divisible or an axis is out of range or
 * repeated. */
LOOMRT_API loomrt_status
loomrt_shard_slice(int64_t rank, const int64_t *global_shape,
                   const int64_t *split_naxes, const int64_t *split_axes,
                   int64_t world_rank, int64_t *offsets, int64_t *local_shape);

/* Reads the shard of world_rank from a global row-major tensor stored at
 * path + offset, into dst (dst_bytes must equal the shard's size). Only the
 * contiguous runs of the shard are read (pread). `what` names the tensor in
 * error messages. Fails with a message naming what, the file, the offset
 * and the expected bytes if the file is missing or too short. */
LOOMRT_API loomrt_status
loomrt_shard_read_file(const char *what, const char *path, int64_t offset,
                       int32_t dtype, int64_t rank, const int64_t *global_shape,
                       const int64_t *split_naxes, const int64_t *split_axes,
                       int64_t world_rank, void *dst, int64_t dst_bytes);

/* Copies the shard of world_rank out of an in-memory global tensor. */
LOOMRT_API loomrt_status loomrt_shard_copy(const loomrt_tensor *global,
                                           const int64_t *split_naxes,
                                           const int64_t *split_axes,
                                           int64_t world_rank, void *dst,
                                           int64_t dst_bytes);

/* Collective over the world: every rank passes its shard (local_bytes
 * bytes); on `root` a new global tensor is assembled into *out (elsewhere
 * *out is set to NULL). A rank's local error fails the call on every rank
 * (they agree first). */
LOOMRT_API loomrt_status loomrt_gather_shards(
    const void *local, int64_t local_bytes, int32_t dtype, int64_t rank,
    const int64_t *global_shape, const int64_t *split_naxes,
    const int64_t *split_axes, int root, loomrt_tensor **out);

/* ---- artifacts -------------------------------------------------------------
 */

typedef struct loomrt_artifact loomrt_artifact;

/* What kind of buffer of the entry. */
typedef enum loomrt_kind {
  LOOMRT_INPUT = 0,
  LOOMRT_WEIGHT = 1,
  LOOMRT_OUTPUT = 2
} loomrt_kind;

/* Description of one manifest tensor; pointers owned by the artifact. */
typedef struct loomrt_tensor_info {
  const char *name;
  int32_t dtype;
  int64_t rank;
  const int64_t *shape;       /* global */
  const int64_t *local_shape; /* per rank */
  const int64_t *split_naxes; /* per dim */
  const int64_t *split_axes;  /* per dim, packed */
  const char *file;           /* weights: absolute path; NULL for inputs,
                                 outputs and optimizer state that starts at
                                 zero (manifest role "state", no file) */
  int64_t offset;             /* weights: byte offset; else 0 */
  int64_t batch_dim;          /* micro-batched inputs/outputs: the dimension
                                 cut into micro-batches; else -1 */
  int32_t sum_over_micro_batches; /* outputs: a weight's gradient, which a
                                 step of several micro-batches sums (16-bit
                                 floats in float32, rounded once); else 0 */
  int32_t file_dtype;             /* weights with a file: the element type it
                                     holds (a narrower float widened to `dtype`
                                     at load: a 16-bit parameter's master copy);
                                     else `dtype` */
  int32_t tier;                   /* weights: where memory placement keeps
                                     it, LOOMRT_TIER_* (NVMe's in the NVMe
                                     tier's file); else LOOMRT_TIER_DEVICE */
  int64_t arena_offset;           /* weights: its byte offset in its tier's
                                     arena (the device's or the host's) or in
                                     the NVMe tier's file, where the static
                                     memory plan places it; else -1 (a
                                     buffer of its own) */
} loomrt_tensor_info;

/* Memory placement's tiers (manifest "tier"). */
enum {
  LOOMRT_TIER_DEVICE = 0,
  LOOMRT_TIER_HOST = 1,
  LOOMRT_TIER_NVME = 2,
};

/* Parses and validates ARTIFACT/manifest.json (format, version, backend,
 * grid, ranks, every tensor's dtype/shape/split/local_shape). Does not look
 * at MPI. Relative weight files resolve against the artifact directory. */
LOOMRT_API loomrt_status loomrt_artifact_open(const char *dir,
                                              loomrt_artifact **out);
LOOMRT_API void loomrt_artifact_close(loomrt_artifact *a);
LOOMRT_API int64_t loomrt_artifact_ranks(const loomrt_artifact *a);
LOOMRT_API int64_t loomrt_artifact_grid_ndims(const loomrt_artifact *a);
LOOMRT_API const int64_t *loomrt_artifact_grid_shape(const loomrt_artifact *a);
LOOMRT_API int64_t loomrt_artifact_count(const loomrt_artifact *a,
                                         int32_t kind);
/* Micro-batches per step (1 unless the plan micro-batches). The program
 * computes one; an input or output with a batch_dim holds all of them along
 * that dimension (its manifest shape times the count), one without it is
 * the same for every micro-batch. */
LOOMRT_API int64_t loomrt_artifact_micro_batches(const loomrt_artifact *a);
/* After load: this rank's pipeline stage (0 without stages; -1 before).
 * A pipelined manifest lists per stage an entry and its buffers; after load
 * count/info/buffer describe this rank's stage: every stage takes all
 * inputs, only the last stage has outputs. */
LOOMRT_API int64_t loomrt_artifact_stage(const loomrt_artifact *a);
/* After load: the lowest world rank that holds the outputs. */
LOOMRT_API int64_t loomrt_artifact_output_rank(const loomrt_artifact *a);
/* After load, collective over the ranks that hold the outputs (the last
 * pipeline stage's, or every rank): each passes its shard of output `index`
 * (`local`, of the output's local shape); on the output rank a new global
 * tensor is assembled into *out (elsewhere *out is set to NULL). A rank's
 * local error fails the call on every one of them (they agree first); a
 * rank that holds no outputs gets an error. */
LOOMRT_API loomrt_status loomrt_artifact_gather_output(
    const loomrt_artifact *a, int64_t index, const loomrt_tensor *local,
    loomrt_tensor **out);
/* Bytes of this rank's static-memory-plan arena (0 when the program has
 * none, or before loomrt_artifact_load): one region the runtime maps at load
 * and the program places its planned buffers in. */
LOOMRT_API int64_t loomrt_artifact_arena_bytes(const loomrt_artifact *a);
/* Bytes of this rank's host arena (0 when the program has none): where the
 * plan's offloaded activations wait for the backward, gradients land for
 * the host's optimizer, and the weights and optimizer state the plan puts
 * in host memory live; passed right after the device arena. */
LOOMRT_API int64_t loomrt_artifact_host_arena_bytes(const loomrt_artifact *a);
/* After load: bytes of this rank's weights, the step's and its update's own
 * (the optimizer's state), that the static memory plan places ("arena_offset":
 * in the device's or the host's arena, or in the NVMe tier's file) when
 * `placed` is nonzero; else of those it does not (buffers of their own, or
 * appended to the NVMe tier's file). */
LOOMRT_API int64_t loomrt_artifact_weight_bytes(const loomrt_artifact *a,
                                                int32_t placed);
/* Before load: the directory the NVMe tier's file goes in (default: the
 * artifact's). Weights the manifest places on NVMe ("tier": "nvme": memory
 * placement's streamed parameters and optimizer state) are held in one
 * shared mapping of a file created there and unlinked at once, so their
 * bytes live on that file system and the kernel pages them. */
LOOMRT_API loomrt_status loomrt_artifact_set_nvme_dir(loomrt_artifact *a,
                                                      const char *dir);
/* After load: bytes of this rank's NVMe tier (0 when nothing is there). */
LOOMRT_API int64_t loomrt_artifact_nvme_bytes(const loomrt_artifact *a);
LOOMRT_API loomrt_status loomrt_artifact_info(const loomrt_artifact *a,
                                              int32_t kind, int64_t index,
                                              loomrt_tensor_info *info);
/* Checks world size == ranks, sets the grid, dlopens the program library
 * (RTLD_NOW | RTLD_GLOBAL) and resolves the entry (and the update entry,
 * where the manifest has one), and allocates every
 * local buffer (zero-filled). Collective over the world (it makes the
 * communicator of the ranks holding the outputs): every rank loads, and
 * loads its artifacts in the same order. */
LOOMRT_API loomrt_status loomrt_artifact_load(loomrt_artifact *a);
/* The local buffer of a tensor (after load); owned by the artifact. */
LOOMRT_API loomrt_tensor *loomrt_artifact_buffer(loomrt_artifact *a,
                                                 int32_t kind, int64_t index);
/* Reads this rank's shard of every weight from its file (the update's own
 * weights too; those without a file start at zero). */
LOOMRT_API loomrt_status loomrt_artifact_load_weights(loomrt_artifact *a);
/* The micro-batch (0 <= m < micro_batches) the next run computes. A
 * program whose planned buffers lie at different places per micro-batch
 * (manifest "micro_batch_places") reads it; others ignore it. */
LOOMRT_API loomrt_status loomrt_artifact_set_micro_batch(loomrt_artifact *a,
                                                         int64_t m);
/* Calls entry(buffers): inputs, weights, the arenas and the micro-batch
 * index where the program has them, outputs, in manifest order. */
LOOMRT_API loomrt_status loomrt_artifact_run(loomrt_artifact *a);
/* Whether the program has an update entry (manifest "update": the
 * optimizer of a micro-batched or pipelined training step, whose calls of
 * the entry only sum the gradients). */
LOOMRT_API int loomrt_artifact_has_update(const loomrt_artifact *a);
/* Calls the update entry once a step, after the step's micro-batches: it
 * updates the weights from the gradients' sums and zeroes the sums. Its
 * buffers are the step's weights of the names it lists, and its own
 * (the optimizer's state or a host copy, loaded by
 * loomrt_artifact_load_weights).
 * Collective over the world where the update has collectives (ZeRO). */
LOOMRT_API loomrt_status loomrt_artifact_update(loomrt_artifact *a);

/* ---- collectives called by compiled programs -------------------------------
 */
/* axes: naxes grid axes, axis i in bits [8*i, 8*i+8); the group is every
 * rank that shares this rank's coordinates on the other axes, ordered by the
 * row-major linearisation of the coordinates on the listed axes, in the
 * listed order. Communicators are created once per axis list and cached. */

/* out = concatenation of every group member's `in`, in group order. */
LOOMRT_API void loomrt_all_gather(const void *in, void *out,
                                  int64_t bytes_per_rank, int64_t naxes,
                                  int64_t axes);
/* Block j of `in` goes to member j; block i of `out` came from member i. */
LOOMRT_API void loomrt_all_to_all(const void *in, void *out,
                                  int64_t bytes_per_peer, int64_t naxes,
                                  int64_t axes);
/* out = block (my group index) of the elementwise reduction of `in`
 * (group size * count_per_rank elements). */
LOOMRT_API void loomrt_reduce_scatter(const void *in, void *out,
                                      int64_t count_per_rank, int32_t dtype,
                                      int32_t op, int64_t naxes, int64_t axes);
/* In-place elementwise reduction over the group. */
LOOMRT_API void loomrt_all_reduce(void *inout, int64_t count, int32_t dtype,
                                  int32_t op, int64_t naxes, int64_t axes);
/* Point to point on the world communicator. A send never waits for its
 * receiver: the bytes are copied and sent in the background, so a program's
 * sends cannot deadlock against its receives whatever the message sizes
 * (pipeline stages rely on it). loomrt_complete_sends waits until every send
 * made so far has been delivered; loomrt_artifact_run and
 * loomrt_artifact_update call it after their entry returns and
 * loomrt_finalize before finalising. */
LOOMRT_API void loomrt_send(const void *buf, int64_t bytes,
                            int64_t dest_world_rank, int64_t tag);
LOOMRT_API void loomrt_complete_sends(void);
LOOMRT_API void loomrt_recv(void *buf, int64_t bytes, int64_t src_world_rank,
                            int64_t tag);
/* Point to point within this rank's group over the axes (pipeline stages:
 * the pipeline axis), addressed by the peer's group index. */
LOOMRT_API void loomrt_send_in_group(const void *buf, int64_t bytes,
                                     int64_t dest_index, int64_t tag,
                                     int64_t naxes, int64_t axes);
LOOMRT_API void loomrt_recv_in_group(void *buf, int64_t bytes,
                                     int64_t src_index, int64_t tag,
                                     int64_t naxes, int64_t axes);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LOOM_RUNTIME_INCLUDE_LOOMRT_H */
