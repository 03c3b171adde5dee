#include "loom/Plan/StrategyGraph.h"
#include <gtest/gtest.h>
TEST(StrategyGraph, Placeholder) {}
