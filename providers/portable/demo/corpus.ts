/**
 * The offline demo's bundled corpus: short explanatory notes on how deep research agents
 * plan, search, read, cite and verify. Written for Sonde and dedicated to the public
 * domain (CC0). The `.invalid` host (RFC 2606) guarantees that nothing here resolves.
 */
export interface DemoDocument {
  url: string;
  title: string;
  text: string;
}

export const DEMO_HOST = "demo.sonde.invalid";

export const demoCorpus: readonly DemoDocument[] = [
  {
    url: `https://${DEMO_HOST}/notes/planning`,
    title: "Planning a research question",
    text: [
      "A deep research agent starts by planning. It restates the question, splits it into sub-questions, and turns each sub-question into a short web search query.",
      "Good plans cover the question from several angles, such as definitions, current figures and known disagreements, so that a single missing source does not leave the answer without support.",
      "A plan is a budget decision as much as a research decision: every query costs a search, and every page it leads to costs a fetch and some model time.",
    ].join("\n\n"),
  },
  {
    url: `https://${DEMO_HOST}/notes/searching`,
    title: "Searching within a budget",
    text: [
      "Research agents search the web through a search API that returns a ranked list of titles, links and snippets for each query.",
      "Because searches and page fetches cost money and time, a careful agent caps them with a budget that is shared by every branch of the research.",
      "Results from different queries often point to the same page, so agents normalize links and read each page only once.",
      "Running two or three searches in parallel shortens the wall-clock time of a job without raising its total cost.",
    ].join("\n\n"),
  },
  {
    url: `https://${DEMO_HOST}/notes/reading`,
    title: "Reading sources and extracting evidence",
    text: [
      "After searching, the agent fetches the most promising pages and converts their HTML into plain text so that passages can be quoted exactly.",
      "Each piece of evidence is stored as a finding: a short claim together with an exact quotation copied from the source text.",
      "Keeping the quotation exact matters because it allows a program, not just a model, to confirm later that the source really says it.",
      "Pages that cannot be fetched, or that contain no readable text, are recorded as gaps instead of being silently ignored.",
    ].join("\n\n"),
  },
  {
    url: `https://${DEMO_HOST}/notes/citing`,
    title: "Citing sources in a research report",
    text: [
      "A research report cites its sources inline: each factual sentence carries a marker that points to the source supporting it.",
      "A citation records the source link, its title, the supporting quotation, and the character range of the report text that it supports.",
      "Citations that point to a character range let a reader, or a program, check exactly which statement each source is meant to support.",
      "A report that cites the same source many times should list that source once in its bibliography.",
    ].join("\n\n"),
  },
  {
    url: `https://${DEMO_HOST}/notes/verifying`,
    title: "How deep research agents verify their citations",
    text: [
      "Deep research agents verify citations in two separate steps. First, a mechanical check confirms that every quotation appears word for word in the stored text of its source.",
      "Second, a separate model call reads each quotation on its own and judges whether it supports the claim, contradicts it, or says nothing about it.",
      "Claims whose quotations fail either check are dropped from the report and reported as gaps, so the reader can see what could not be established.",
      "Derived numbers, such as a growth rate computed from two figures, are only kept when their inputs, units, dates and arithmetic are checked mechanically.",
    ].join("\n\n"),
  },
  {
    url: `https://${DEMO_HOST}/notes/durability`,
    title: "Durable research jobs",
    text: [
      "Research jobs can run for minutes, so a durable agent writes a receipt for every model call, search and page fetch before it uses the result.",
      "When a job is resumed after a restart, completed receipts are reused, so no search is repeated and no model call is paid for twice.",
      "A job keeps its original deadline across restarts; once the deadline has passed, the agent writes a partial report from the evidence it already holds.",
      "An idempotency key lets a client submit the same request twice after a network failure and still get back the one job it started.",
    ].join("\n\n"),
  },
];
