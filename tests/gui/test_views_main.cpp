// The main of both GUI test binaries: a QApplication on Qt's offscreen platform, with test-only settings. The views'
// own tests (one view at a time, hand-made runs) and the whole window with real training (test_gui.cpp) use it.
#include <gtest/gtest.h>

#include <QApplication>

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication application(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("DescentLab-tests"));  // never the user's own settings
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
