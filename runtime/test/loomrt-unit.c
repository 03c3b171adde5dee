/* loomrt-unit.c - C-level unit test of the loomrt API (no MPI launcher).
 *
 * Exercises what can be checked in one process: dtype tables, tensors,
 * .npy and .pb round trips (including hand-written protobuf with typed and
 * packed fields), file_info offsets, rejection of Fortran-order/big-endian
 * .npy, shard slicing over a 2x2 grid (from a file and from memory) and the
 * too-short-file message, and an opened artifact's micro-batch range and
 * output gather before load, and 16-bit sums in float32. Usage: loomrt-unit
 * SCRATCH_DIR. Prints "ok" lines and exits non-zero at the first failure.
 */
#include "loomrt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "FAIL %s:%d: %s (last error: %s)\n", __FILE__, __LINE__, \
              #cond, loomrt_last_error());                                     \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static char dir[4096];
static const char *path(const char *name) {
  static char buf[2][8192];
  static int which = 0;
  which ^= 1;
  snprintf(buf[which], sizeof(buf[which]), "%s/%s", dir, name);
  return buf[which];
}

static void writeBytes(const char *p, const void *data, size_t n) {
  FILE *f = fopen(p, "wb");
  CHECK(f);
  CHECK(fwrite(data, 1, n, f) == n);
  fclose(f);
}

static void testDtypes(void) {
  for (int i = 0; i < LOOMRT_NUM_DTYPES; ++i)
    CHECK(loomrt_dtype_from_name(loomrt_dtype_name(i)) == i);
  CHECK(loomrt_dtype_size(LOOMRT_BFLOAT16) == 2);
  CHECK(loomrt_dtype_size(LOOMRT_BOOL) == 1);
  CHECK(loomrt_dtype_from_name("complex64") == -1);
  printf("ok dtypes\n");
}

static void roundTrip(const char *file, int32_t dtype, int64_t rank,
                      const int64_t *shape) {
  loomrt_tensor *t, *u;
  CHECK(loomrt_tensor_create(dtype, rank, shape, &t) == LOOMRT_OK);
  CHECK(((uintptr_t)loomrt_tensor_data(t) & 63) == 0);
  unsigned char *d = loomrt_tensor_data(t);
  for (int64_t i = 0; i < loomrt_tensor_nbytes(t); ++i)
    d[i] = (unsigned char)(dtype == LOOMRT_BOOL ? i % 2 : i * 7 + 1);
  CHECK(loomrt_tensor_write(path(file), t, "tensor_name") == LOOMRT_OK);
  CHECK(loomrt_tensor_read(path(file), &u) == LOOMRT_OK);
  int32_t expect = dtype;
  if (dtype == LOOMRT_BFLOAT16 && loomrt_file_format(file) == 0)
    expect = LOOMRT_UINT16; /* numpy has no bfloat16 */
  CHECK(loomrt_tensor_dtype(u) == expect);
  CHECK(loomrt_tensor_rank(u) == rank);
  for (int64_t i = 0; i < rank; ++i)
    CHECK(loomrt_tensor_shape(u)[i] == shape[i]);
  CHECK(loomrt_tensor_nbytes(u) == loomrt_tensor_nbytes(t));
  CHECK(memcmp(loomrt_tensor_data(u), d, loomrt_tensor_nbytes(t)) == 0);
  int32_t fdt;
  int64_t frank, fshape[LOOMRT_MAX_RANK], off;
  CHECK(loomrt_file_info(path(file), &fdt, &frank, fshape, &off) == LOOMRT_OK);
  CHECK(fdt == expect && frank == rank && off > 0);
  loomrt_tensor_destroy(t);
  loomrt_tensor_destroy(u);
}

static void testRoundTrips(void) {
  int64_t s3[3] = {2, 3, 5}, s1[1] = {7}, s0[1] = {0};
  char name[64];
  for (int dt = 0; dt < LOOMRT_NUM_DTYPES; ++dt) {
    snprintf(name, sizeof(name), "rt%d.npy", dt);
    roundTrip(name, dt, 3, s3);
    snprintf(name, sizeof(name), "rt%d.pb", dt);
    roundTrip(name, dt, 3, s3);
  }
  roundTrip("scalar.npy", LOOMRT_FLOAT32, 0, s0);
  roundTrip("scalar.pb", LOOMRT_INT64, 0, s0);
  roundTrip("vec.npy", LOOMRT_FLOAT64, 1, s1);
  roundTrip("empty.npy", LOOMRT_FLOAT32, 1, s0);
  /* pb name */
  loomrt_tensor *t;
  char got[32];
  CHECK(loomrt_pb_read(path("rt0.pb"), &t, got, sizeof(got)) == LOOMRT_OK);
  CHECK(strcmp(got, "tensor_name") == 0);
  loomrt_tensor_destroy(t);
  printf("ok round trips\n");
}

static void testTypedPb(void) {
  /* dims [3] (unpacked), data_type INT8 (3), int32_data unpacked -1, 2, -3. */
  unsigned char int8pb[] = {0x08, 3,    0x10, 3,    0x28, 0xff, 0xff,
                            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                            0x01, 0x28, 2,    0x28, 0xfd, 0xff, 0xff,
                            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  writeBytes(path("int8.pb"), int8pb, sizeof(int8pb));
  loomrt_tensor *t;
  CHECK(loomrt_tensor_read(path("int8.pb"), &t) == LOOMRT_OK);
  CHECK(loomrt_tensor_dtype(t) == LOOMRT_INT8);
  int8_t *v = loomrt_tensor_data(t);
  CHECK(v[0] == -1 && v[1] == 2 && v[2] == -3);
  loomrt_tensor_destroy(t);
  int32_t fdt;
  int64_t frank, fshape[LOOMRT_MAX_RANK], off;
  CHECK(loomrt_file_info(path("int8.pb"), &fdt, &frank, fshape, &off) ==
        LOOMRT_OK);
  CHECK(off == -1 && frank == 1 && fshape[0] == 3);

  /* dims packed [2, 2], FLOAT, float_data packed 1 2 3 4, name "x". */
  unsigned char fpb[64];
  int n = 0;
  fpb[n++] = 0x0a;
  fpb[n++] = 2;
  fpb[n++] = 2;
  fpb[n++] = 2;
  fpb[n++] = 0x10;
  fpb[n++] = 1;
  fpb[n++] = 0x42;
  fpb[n++] = 1;
  fpb[n++] = 'x';
  fpb[n++] = 0x22;
  fpb[n++] = 16;
  float fl[4] = {1, 2, 3, 4};
  memcpy(fpb + n, fl, 16);
  n += 16;
  writeBytes(path("float.pb"), fpb, n);
  CHECK(loomrt_tensor_read(path("float.pb"), &t) == LOOMRT_OK);
  CHECK(loomrt_tensor_rank(t) == 2 && loomrt_tensor_shape(t)[1] == 2);
  CHECK(memcmp(loomrt_tensor_data(t), fl, 16) == 0);
  loomrt_tensor_destroy(t);

  /* Too few elements for the dims. */
  fpb[10] = 12;
  writeBytes(path("short.pb"), fpb, n - 4);
  CHECK(loomrt_tensor_read(path("short.pb"), &t) == LOOMRT_ERR_FORMAT);
  CHECK(strstr(loomrt_last_error(), "3 data elements"));
  printf("ok typed pb\n");
}

static void testNpyRejects(void) {
  const char *hdr[] = {
      "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
      "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }",
      "{'descr': '<c8', 'fortran_order': False, 'shape': (2, 2), }"};
  const char *expect[] = {"Fortran-order", "big-endian", "unsupported .npy"};
  for (int i = 0; i < 3; ++i) {
    unsigned char buf[256] = "\x93NUMPY\x01\x00";
    size_t len = strlen(hdr[i]);
    buf[8] = (unsigned char)(len + 1);
    buf[9] = 0;
    memcpy(buf + 10, hdr[i], len);
    buf[10 + len] = '\n';
    memset(buf + 11 + len, 0, 16);
    writeBytes(path("bad.npy"), buf, 11 + len + 16);
    loomrt_tensor *t;
    CHECK(loomrt_npy_read(path("bad.npy"), &t) == LOOMRT_ERR_FORMAT);
    CHECK(strstr(loomrt_last_error(), expect[i]));
  }
  writeBytes(path("junk.npy"), "hello", 5);
  loomrt_tensor *t;
  CHECK(loomrt_npy_read(path("junk.npy"), &t) == LOOMRT_ERR_FORMAT);
  CHECK(loomrt_npy_read(path("missing.npy"), &t) == LOOMRT_ERR_IO);
  CHECK(strstr(loomrt_last_error(), "missing.npy"));
  printf("ok npy rejects\n");
}

static void testShards(void) {
  int64_t grid[2] = {2, 2};
  CHECK(loomrt_set_grid(2, grid) == LOOMRT_OK);
  int64_t coords[2];
  CHECK(loomrt_grid_coords(2, coords) == LOOMRT_OK);
  CHECK(coords[0] == 1 && coords[1] == 0);

  /* Global [4, 6] int32 = 0..23, written at offset 100 of a raw file. */
  int64_t shape[2] = {4, 6};
  int32_t global[24];
  for (int i = 0; i < 24; ++i)
    global[i] = i;
  unsigned char raw[100 + sizeof(global)];
  memset(raw, 0xee, 100);
  memcpy(raw + 100, global, sizeof(global));
  writeBytes(path("w.bin"), raw, sizeof(raw));
  loomrt_tensor *g;
  CHECK(loomrt_tensor_create(LOOMRT_INT32, 2, shape, &g) == LOOMRT_OK);
  memcpy(loomrt_tensor_data(g), global, sizeof(global));

  /* split [[0], [1]]: rank r holds rows 2*c0.., cols 3*c1.. */
  int64_t naxes[2] = {1, 1}, axes[2] = {0, 1};
  /* split [[1, 0], []]: dim 0 over axes (1, 0): shard = c1 * 2 + c0. */
  int64_t naxes2[2] = {2, 0}, axes2[2] = {1 | (0 << 8), 0};
  for (int r = 0; r < 4; ++r) {
    int64_t c0 = r / 2, c1 = r % 2, off[2], loc[2];
    CHECK(loomrt_shard_slice(2, shape, naxes, axes, r, off, loc) == LOOMRT_OK);
    CHECK(loc[0] == 2 && loc[1] == 3 && off[0] == 2 * c0 && off[1] == 3 * c1);
    int32_t a[6], b[6];
    CHECK(loomrt_shard_read_file("weight 'w'", path("w.bin"), 100, LOOMRT_INT32,
                                 2, shape, naxes, axes, r, a,
                                 sizeof(a)) == LOOMRT_OK);
    CHECK(loomrt_shard_copy(g, naxes, axes, r, b, sizeof(b)) == LOOMRT_OK);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) {
        CHECK(a[i * 3 + j] == global[(off[0] + i) * 6 + off[1] + j]);
        CHECK(b[i * 3 + j] == a[i * 3 + j]);
      }
    CHECK(loomrt_shard_slice(2, shape, naxes2, axes2, r, off, loc) ==
          LOOMRT_OK);
    CHECK(loc[0] == 1 && loc[1] == 6 && off[0] == c1 * 2 + c0 && off[1] == 0);
    CHECK(loomrt_shard_read_file("weight 'w'", path("w.bin"), 100, LOOMRT_INT32,
                                 2, shape, naxes2, axes2, r, a,
                                 sizeof(a)) == LOOMRT_OK);
    for (int j = 0; j < 6; ++j)
      CHECK(a[j] == global[off[0] * 6 + j]);
  }
  /* Too short: offset 101 runs one byte past the end. */
  int32_t a[6];
  CHECK(loomrt_shard_read_file("weight 'w'", path("w.bin"), 101, LOOMRT_INT32,
                               2, shape, naxes, axes, 3, a,
                               sizeof(a)) == LOOMRT_ERR_IO);
  CHECK(strstr(loomrt_last_error(), "weight 'w'") &&
        strstr(loomrt_last_error(), "offset 101") &&
        strstr(loomrt_last_error(), "96 bytes"));
  CHECK(loomrt_shard_read_file("weight 'w'", path("nope.bin"), 0, LOOMRT_INT32,
                               2, shape, naxes, axes, 0, a,
                               sizeof(a)) == LOOMRT_ERR_IO);
  CHECK(strstr(loomrt_last_error(), "nope.bin"));
  /* Wrong destination size and indivisible dims. */
  CHECK(loomrt_shard_copy(g, naxes, axes, 0, a, 20) == LOOMRT_ERR_INVALID);
  int64_t odd[2] = {3, 6}, off[2], loc[2];
  CHECK(loomrt_shard_slice(2, odd, naxes, axes, 0, off, loc) ==
        LOOMRT_ERR_INVALID);
  CHECK(strstr(loomrt_last_error(), "not divisible"));
  loomrt_tensor_destroy(g);
  CHECK(loomrt_set_grid(0, NULL) == LOOMRT_OK);
  printf("ok shards\n");
}

/* Writes `manifest` into the scratch directory and opens it there. */
static loomrt_artifact *openManifest(const char *manifest, size_t bytes) {
  writeBytes(path("manifest.json"), manifest, bytes);
  loomrt_artifact *a = NULL;
  CHECK(loomrt_artifact_open(dir, &a) == LOOMRT_OK);
  return a;
}

/* An opened (not loaded) artifact: the micro-batch a call runs must be one
 * of the step's, and gathering an output needs a loaded artifact. */
static void testArtifactState(void) {
  static const char manifest[] =
      "{\"format\": \"loom-artifact\", \"version\": 1, \"backend\": \"cpu\",\n"
      " \"library\": \"program.so\", \"entry\": \"loom_entry\", \"grid\": "
      "null,\n"
      " \"ranks\": 1, \"micro_batches\": 2, \"inputs\": [], \"weights\": [],\n"
      " \"outputs\": [{\"name\": \"y\", \"dtype\": \"float32\", \"shape\": "
      "[2],\n"
      "               \"local_shape\": [2], \"split\": [[]]}]}\n";
  loomrt_artifact *a = openManifest(manifest, sizeof(manifest) - 1);
  CHECK(loomrt_artifact_micro_batches(a) == 2);
  CHECK(loomrt_artifact_set_micro_batch(a, 1) == LOOMRT_OK);
  CHECK(loomrt_artifact_set_micro_batch(a, 2) == LOOMRT_ERR_INVALID);
  CHECK(strstr(loomrt_last_error(), "micro-batch 2 of a step of 2"));
  CHECK(loomrt_artifact_set_micro_batch(a, -1) == LOOMRT_ERR_INVALID);
  CHECK(loomrt_artifact_set_micro_batch(NULL, 0) == LOOMRT_ERR_STATE);
  int64_t shape[1] = {2};
  loomrt_tensor *local = NULL, *out = NULL;
  CHECK(loomrt_tensor_create(LOOMRT_FLOAT32, 1, shape, &local) == LOOMRT_OK);
  CHECK(loomrt_artifact_gather_output(a, 0, local, &out) != LOOMRT_OK);
  CHECK(out == NULL);
  CHECK(loomrt_artifact_gather_output(a, 1, local, &out) == LOOMRT_ERR_INVALID);
  CHECK(strstr(loomrt_last_error(), "invalid artifact output"));
  loomrt_tensor_destroy(local);
  loomrt_artifact_close(a);
  printf("ok artifact state\n");
}

/* A weight's info says what its file holds and where placement puts it: a
 * float32 master copy read from bfloat16 bytes, kept on NVMe at the plan's
 * offset there; a moment in its own buffer. */
static void testWeightInfo(void) {
  static const char manifest[] =
      "{\"format\": \"loom-artifact\", \"version\": 1, \"backend\": \"cpu\",\n"
      " \"library\": \"program.so\", \"entry\": \"loom_entry\", \"grid\": "
      "null, \"ranks\": 1, \"inputs\": [],\n"
      " \"outputs\": [{\"name\": \"y\", \"dtype\": \"float32\", \"shape\": "
      "[2], "
      "\"local_shape\": [2], \"split\": [[]]}],\n"
      " \"weights\": [{\"name\": \"w.master\", \"role\": \"state\", "
      "\"dtype\": \"float32\", \"shape\": [2], \"local_shape\": [2], "
      "\"split\": [[]], \"file\": \"w.bin\", \"offset\": 0, "
      "\"file_dtype\": \"bfloat16\", \"tier\": \"nvme\", "
      "\"arena_offset\": 256},\n"
      "  {\"name\": \"v\", \"role\": \"state\", \"dtype\": \"float32\", "
      "\"shape\": [2], \"local_shape\": [2], \"split\": [[]]}]}\n";
  loomrt_artifact *a = openManifest(manifest, sizeof(manifest) - 1);
  loomrt_tensor_info info;
  CHECK(loomrt_artifact_info(a, LOOMRT_WEIGHT, 0, &info) == LOOMRT_OK);
  CHECK(info.dtype == LOOMRT_FLOAT32 && info.file_dtype == LOOMRT_BFLOAT16);
  CHECK(info.tier == LOOMRT_TIER_NVME && info.arena_offset == 256);
  CHECK(loomrt_artifact_info(a, LOOMRT_WEIGHT, 1, &info) == LOOMRT_OK);
  CHECK(info.file == NULL && info.file_dtype == LOOMRT_FLOAT32);
  CHECK(info.tier == LOOMRT_TIER_DEVICE && info.arena_offset == -1);
  loomrt_artifact_close(a);
  printf("ok weight info\n");
}

/* A manifest of one output and `weights`, with `arenas` (its arena sizes)
 * before its outputs, in `out`; its length. */
static size_t arenaManifest(char *out, size_t cap, const char *weights,
                            const char *arenas) {
  int n = snprintf(
      out, cap,
      "{\"format\": \"loom-artifact\", \"version\": 1, \"backend\": "
      "\"cpu\", \"library\": \"program.so\", \"entry\": \"loom_entry\", "
      "\"grid\": null, \"ranks\": 1, \"inputs\": [], %s\"outputs\": "
      "[{\"name\": \"y\", \"dtype\": \"float32\", \"shape\": [2], "
      "\"local_shape\": [2], \"split\": [[]]}], \"weights\": [%s]}\n",
      arenas, weights);
  CHECK(n > 0 && (size_t)n < cap);
  return (size_t)n;
}

/* Opening such a manifest fails, saying `why`. */
static void refuseArenaPlaces(const char *weights, const char *arenas,
                              const char *why) {
  char manifest[2048];
  writeBytes(path("manifest.json"), manifest,
             arenaManifest(manifest, sizeof manifest, weights, arenas));
  loomrt_artifact *a = NULL;
  CHECK(loomrt_artifact_open(dir, &a) == LOOMRT_ERR_INVALID && a == NULL);
  if (!strstr(loomrt_last_error(), why)) {
    fprintf(stderr, "expected '%s' in: %s\n", why, loomrt_last_error());
    CHECK(0);
  }
}

/* The static memory plan's places: inside their arena, and no two weights
 * of a tier sharing a byte (each lives as long as the program is loaded). */
static void testArenaPlaces(void) {
#define STATE(name, tier, at)                                                  \
  "{\"name\": \"" name "\", \"role\": \"state\", \"dtype\": \"float32\", "     \
  "\"shape\": [4], \"local_shape\": [4], \"split\": [[]], \"tier\": \"" tier   \
  "\", \"arena_offset\": " at "}"
  const char *arenas = "\"arena_bytes\": 64, \"host_arena_bytes\": 32, ";
  /* Sixteen bytes each: side by side in both arenas, at one offset in two
   * tiers, and one on NVMe past any arena's end. */
  char manifest[2048];
  size_t n = arenaManifest(
      manifest, sizeof manifest,
      STATE("a", "device", "0") ", " STATE("b", "device", "16") ", " STATE(
          "c", "host", "16") ", " STATE("d", "host",
                                        "0") ", " STATE("e", "nvme", "4096"),
      arenas);
  loomrt_artifact_close(openManifest(manifest, n));
  refuseArenaPlaces(STATE("a", "host", "0") ", " STATE("b", "host", "8"),
                    arenas,
                    "weights[0] ('a') at [0, 16) and weights[1] ('b') at [8, "
                    "24) overlap in the host arena");
  refuseArenaPlaces(STATE("a", "host", "24"), arenas,
                    "weights[0] ('a') lies at [24, 40) of the host arena, "
                    "which has 32 bytes");
  refuseArenaPlaces(STATE("a", "host", "0"), "",
                    "weights[0] ('a') lies at [0, 16) of the host arena, "
                    "which has 0 bytes");
  refuseArenaPlaces(STATE("a", "device", "-16"), arenas,
                    "'arena_offset' must be a non-negative integer");
  refuseArenaPlaces(STATE("a", "device", "2"), arenas,
                    "weights[0] ('a') lies at 2, not a multiple of its "
                    "float32 elements' size");
  /* (An NVMe place has no arena size to check, but its end must be an
   * int64_t: the tier's file is sized by it.) */
  refuseArenaPlaces(STATE("a", "nvme", "9223372036854775800"), arenas,
                    "weights[0] ('a') lies at 9223372036854775800, past any "
                    "arena");
#undef STATE
  printf("ok arena places\n");
}

/* 16-bit floats sum in float32 and round once: 512 bfloat16 ones sum to
 * 512 (a bfloat16 running sum stops at 256), and halfway values round to
 * even. */
static void testAccumulate(void) {
  int64_t n = 2;
  loomrt_tensor *part, *sum, *out, *f64;
  CHECK(loomrt_tensor_create(LOOMRT_BFLOAT16, 1, &n, &part) == LOOMRT_OK);
  CHECK(loomrt_tensor_create(LOOMRT_FLOAT32, 1, &n, &sum) == LOOMRT_OK);
  CHECK(loomrt_tensor_create(LOOMRT_BFLOAT16, 1, &n, &out) == LOOMRT_OK);
  uint16_t *bits = loomrt_tensor_data(part);
  bits[0] = 0x3f80; /* 1.0 */
  bits[1] = 0xbf80; /* -1.0 */
  for (int k = 0; k < 512; ++k)
    CHECK(loomrt_tensor_accumulate(sum, part) == LOOMRT_OK);
  float *s = loomrt_tensor_data(sum);
  CHECK(s[0] == 512.0f && s[1] == -512.0f);
  CHECK(loomrt_tensor_round(sum, out) == LOOMRT_OK);
  uint16_t *o = loomrt_tensor_data(out);
  CHECK(o[0] == 0x4400 && o[1] == 0xc400); /* +-512 */
  s[0] = 1.0f + 1.0f / 256; /* halfway between bfloat16 1 and 1 + 2^-7 */
  s[1] = 1.0f + 3.0f / 256; /* halfway between 1 + 2^-7 and 1 + 2^-6 */
  CHECK(loomrt_tensor_round(sum, out) == LOOMRT_OK);
  CHECK(o[0] == 0x3f80 && o[1] == 0x3f82);
  /* A float64 sum takes float64 only; a bfloat16 sum nothing. */
  CHECK(loomrt_tensor_create(LOOMRT_FLOAT64, 1, &n, &f64) == LOOMRT_OK);
  CHECK(loomrt_tensor_accumulate(f64, part) == LOOMRT_ERR_INVALID);
  CHECK(strstr(loomrt_last_error(), "a float64 sum of bfloat16"));
  CHECK(loomrt_tensor_accumulate(out, part) == LOOMRT_ERR_INVALID);
  CHECK(loomrt_tensor_round(f64, out) == LOOMRT_ERR_INVALID);
  CHECK(strstr(loomrt_last_error(), "round: float64 to bfloat16"));
  loomrt_tensor_destroy(f64);
  loomrt_tensor_destroy(out);
  loomrt_tensor_destroy(sum);
  loomrt_tensor_destroy(part);
  printf("ok accumulate\n");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: loomrt-unit SCRATCH_DIR\n");
    return 2;
  }
  snprintf(dir, sizeof(dir), "%s", argv[1]);
  int64_t t0 = loomrt_now_ns();
  testDtypes();
  testRoundTrips();
  testTypedPb();
  testNpyRejects();
  testShards();
  testArtifactState();
  testWeightInfo();
  testArenaPlaces();
  testAccumulate();
  CHECK(loomrt_now_ns() >= t0);
  printf("all passed\n");
  return failures;
}
