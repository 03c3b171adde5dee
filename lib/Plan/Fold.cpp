// Placeholder: implemented by the folding work.
#include "loom/Plan/Fold.h"
