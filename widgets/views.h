#pragma once
// The live views. Each draws from the LabModel (every run in its own colour) when the coalescing timer refreshes
// it; none holds data of its own beyond the user's choices (metric, layer, smoothing). One file each; this header
// includes them all.

#include "widgets/frontier_view.h"
#include "widgets/lambda_view.h"
#include "widgets/layer_loss_view.h"
#include "widgets/layer_probe_view.h"
#include "widgets/robustness_view.h"
#include "widgets/training_curves_view.h"
#include "widgets/weight_geometry_view.h"
