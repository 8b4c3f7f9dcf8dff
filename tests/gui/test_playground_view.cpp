// Tests of one view, fed with hand-made runs (see test_views_main.cpp).
#include <gtest/gtest.h>
