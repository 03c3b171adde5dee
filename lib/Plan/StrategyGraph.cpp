// Placeholder: implemented by the solver work.
#include "loom/Plan/StrategyGraph.h"
