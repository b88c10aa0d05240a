// Allure 3 configuration of `make report` (e2e/cli/htmlreport.py sets the environment):
// E2E_REPORT_NAME the report's title, E2E_ALLURE_OUTPUT its directory,
// E2E_ALLURE_HISTORY the history file kept next to the results between runs (trend, retries).
export default {
  name: process.env.E2E_REPORT_NAME || "pod-lifecycle-e2e",
  output: process.env.E2E_ALLURE_OUTPUT || "allure-report",
  historyPath: process.env.E2E_ALLURE_HISTORY,
  // the last 5 runs (the file keeps no more): each adds ~0.2 MB to a default run's single-file
  // report, which is to stay within 10 MB (README "What a run leaves")
  historyLimit: 5,
  plugins: {
    awesome: {
      options: {
        singleFile: true,
        reportLanguage: "en",
        // every judged value (a step with measured, documented, band, source) open at once
        stepTreeExpansion: "expanded",
        // case family (parentSuite, e.g. "CL — crash loop back-off"), then the test's case IDs
        groupBy: ["parentSuite", "suite"],
      },
    },
  },
};
