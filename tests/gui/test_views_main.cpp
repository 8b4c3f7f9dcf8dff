// The views' own tests: one view at a time, fed from a LabModel with hand-made runs (no training), on Qt's
// offscreen platform. The whole window with real training is tests/gui/test_gui.cpp.
#include <gtest/gtest.h>

#include <QApplication>

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication application(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("DescentLab-tests"));  // never the user's own settings
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
