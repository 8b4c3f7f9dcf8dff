#pragma once
// The parts of the desktop app's executable beside its main (app/gui/main.cpp): the environment it describes and
// `descentlab report`. LibTorch never reaches these files: the core headers they use are torch-free.

#include <QStringList>

#include "widgets/help_pages.h"

namespace descentlab::gui {

// What the environment dialog and the status bar say of this machine, but the datasets (dataset_lines: reading them
// takes about a second, and the window shows before it).
widgets::EnvironmentSummary summarize_environment();
// Each dataset's line for the environment dialog: its splits' sizes, or how to fetch it.
QStringList dataset_lines();

// `descentlab report RUN.h5|DIR ... --out DIR`: the views rendered to PNG without a window; the exit status.
int run_report(int argc, char** argv);

}  // namespace descentlab::gui
