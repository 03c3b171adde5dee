/* mpi_direct.c - test program that calls MPI itself (as upstream's MPI
 * lowering does): out[0] = sum over ranks of (rank + 1), out[1] = size. */
#include <mpi.h>
#include <stdint.h>

void loom_entry(void **b) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int64_t mine = rank + 1, sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  int64_t *out = b[0];
  out[0] = sum;
  out[1] = size;
}
