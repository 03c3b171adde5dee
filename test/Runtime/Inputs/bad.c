/* bad.c - misbehaving test programs for loom-run's error paths:
 * -DSLEEP sleeps for a minute; -DBAD_AXIS calls a collective over a grid
 * axis that does not exist; otherwise it copies 4 bytes. */
#include "loomrt.h"
#include <string.h>
#include <unistd.h>

void loom_entry(void **b) {
#ifdef SLEEP
  sleep(60);
#endif
#ifdef BAD_AXIS
  loomrt_all_gather(b[0], b[1], 4, 1, 5);
#endif
  memcpy(b[1], b[0], 4);
}
