// The daemon's page: the crawl at a glance, search, a page's view, labels, seeds, pause
// and resume, all through the API (/api/v1). What the crawl found is inserted as text
// only (textContent, text nodes), never parsed as markup.
"use strict";

const API = "/api/v1";
const STATUS_EVERY_MS = 2000;
const TOKEN_KEY = "crawler-api-token";

const $ = (id) => document.getElementById(id);

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

// a link out, only to an http(s) URL; anything else is shown as text
function externalLink(url, text) {
  let parsed = null;
  try {
    parsed = new URL(url);
  } catch (_error) {
    parsed = null;
  }
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    return element("span", text || url);
  }
  const link = element("a", text || url);
  link.href = parsed.href;
  link.rel = "noopener noreferrer";
  link.target = "_blank";
  return link;
}

function pageLink(id, text) {
  const link = element("a", text);
  link.href = "#page/" + encodeURIComponent(String(id));
  return link;
}

function relevance(value) {
  return value === null || value === undefined ? "–" : Number(value).toFixed(3);
}

async function call(method, path, body) {
  const headers = {};
  const options = { method, headers };
  if (method !== "GET") {
    headers.Authorization = "Bearer " + ($("token").value || "").trim();
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body);
    }
  }
  const response = await fetch(API + path, options);
  let answer = null;
  try {
    answer = await response.json();
  } catch (_error) {
    answer = { error: "the daemon answered " + response.status + " without JSON" };
  }
  if (!response.ok) {
    const error = new Error(answer && answer.error ? answer.error : "error " + response.status);
    error.answer = answer;
    throw error;
  }
  return answer;
}

function say(id, text, isError) {
  const node = $(id);
  node.textContent = text || "";
  node.classList.toggle("error", Boolean(isError));
}

// -- the crawl at a glance ------------------------------------------------------------

let previous = null;

async function refreshStatus() {
  try {
    const status = await call("GET", "/status");
    const now = performance.now();
    let rate = status.pages_per_second;
    if (previous && now > previous.at) {
      rate = ((status.visited - previous.visited) * 1000) / (now - previous.at);
    }
    previous = { at: now, visited: status.visited };
    $("state").textContent = status.state;
    $("pages").textContent = status.pages;
    $("relevant").textContent = status.relevant;
    $("rate").textContent = Math.max(rate, 0).toFixed(1);
    $("hosts").textContent = status.hosts;
    $("frontier").textContent = status.frontier;
    $("in-flight").textContent = status.in_flight;
    $("no-changes").hidden = status.changes_allowed;
    $("status-error").hidden = true;
  } catch (error) {
    $("status-error").textContent = "the daemon does not answer: " + error.message;
    $("status-error").hidden = false;
  } finally {
    setTimeout(refreshStatus, STATUS_EVERY_MS);
  }
}

// -- search ---------------------------------------------------------------------------

// a snippet's marked words ([like this]) as <mark> nodes, the rest as text nodes
function snippet(text) {
  const paragraph = element("p", null, "snippet");
  const parts = String(text || "").split(/\[([^\]]*)\]/);
  parts.forEach((part, index) => {
    if (index % 2 === 1) paragraph.appendChild(element("mark", part));
    else if (part) paragraph.appendChild(document.createTextNode(part));
  });
  return paragraph;
}

async function search(event) {
  event.preventDefault();
  const params = new URLSearchParams({ q: $("query").value, limit: "20" });
  if ($("min-relevance").value !== "") params.set("min_relevance", $("min-relevance").value);
  const list = $("results");
  list.replaceChildren();
  say("search-message", "searching…");
  try {
    const answer = await call("GET", "/search?" + params.toString());
    say("search-message", answer.hits.length ? answer.hits.length + " pages" : "no page matches");
    for (const hit of answer.hits) {
      const item = element("li", null, "hit");
      const title = hit.title || hit.url;
      item.appendChild(hit.id === null ? element("span", title) : pageLink(hit.id, title));
      const meta = element("div", null, "meta");
      meta.appendChild(externalLink(hit.url));
      meta.appendChild(document.createTextNode(" · relevance " + relevance(hit.relevance)));
      item.appendChild(meta);
      item.appendChild(snippet(hit.snippet));
      list.appendChild(item);
    }
  } catch (error) {
    say("search-message", error.message, true);
  }
}

// -- a page's view --------------------------------------------------------------------

let shownPage = null;

async function showPage(id) {
  $("search-section").hidden = true;
  $("page-view").hidden = false;
  say("page-message", "");
  for (const id_ of ["page-title", "page-facts", "page-label", "page-text"]) $(id_).textContent = "";
  $("page-outlinks").replaceChildren();
  try {
    const page = await call("GET", "/pages/" + encodeURIComponent(id));
    shownPage = page.id;
    $("page-title").textContent = page.title || page.url;
    const url = $("page-url");
    const link = externalLink(page.url);
    url.textContent = page.url;
    if (link.href) url.href = link.href;
    else url.removeAttribute("href");
    const fetch_ = page.fetch;
    $("page-facts").textContent =
      "relevance " + relevance(page.relevance) + " · depth " + page.depth +
      " · status " + (fetch_.status === null ? "–" : fetch_.status) +
      " · " + (fetch_.content_type || "no content type") +
      " · " + (fetch_.content_length === null ? "–" : fetch_.content_length) + " bytes" +
      " · fetched " + (fetch_.fetched_at || "–") +
      (fetch_.error ? " · error " + fetch_.error : "");
    showLabel(page.label);
    $("page-text").textContent = page.text === null ? "(the crawl keeps no texts)" : page.text;
    const outlinks = $("page-outlinks");
    for (const outlink of page.outlinks) {
      const item = element("li");
      item.appendChild(outlink.visited ? pageLink(outlink.id, outlink.url) : element("span", outlink.url));
      if (!outlink.visited) item.appendChild(element("span", " (queued)", "meta"));
      outlinks.appendChild(item);
    }
    if (page.more_outlinks) outlinks.appendChild(element("li", "… and more", "meta"));
  } catch (error) {
    shownPage = null;
    say("page-message", error.message, true);
  }
}

function showLabel(label) {
  $("page-label").textContent = label === null ? "none" : label ? "relevant" : "not relevant";
}

async function label(relevant) {
  if (shownPage === null) return;
  try {
    const answer = await call("POST", "/pages/" + shownPage + "/label", { relevant });
    showLabel(answer.relevant);
    say("page-message", "labelled");
  } catch (error) {
    say("page-message", error.message, true);
  }
}

function route() {
  const match = /^#page\/(\d+)$/.exec(window.location.hash);
  if (match) {
    showPage(match[1]);
  } else {
    shownPage = null;
    $("page-view").hidden = true;
    $("search-section").hidden = false;
  }
}

// -- worth labelling ------------------------------------------------------------------

async function showUncertain() {
  const list = $("uncertain");
  list.replaceChildren();
  try {
    const answer = await call("GET", "/pages?sort=uncertain&limit=10");
    for (const page of answer.pages) {
      const item = element("li");
      item.appendChild(pageLink(page.id, page.title || page.url));
      item.appendChild(element("span", " relevance " + relevance(page.relevance), "meta"));
      list.appendChild(item);
    }
    if (!answer.pages.length) list.appendChild(element("li", "no page to label", "meta"));
  } catch (error) {
    list.appendChild(element("li", error.message, "error"));
  }
}

// -- steering -------------------------------------------------------------------------

async function setState(what) {
  try {
    const status = await call("POST", "/" + what);
    say("control-message", status.state + ": " + status.in_flight + " visits in flight");
    $("state").textContent = status.state;
  } catch (error) {
    say("control-message", error.message, true);
  }
}

async function addSeeds(event) {
  event.preventDefault();
  const urls = $("seeds").value.split("\n").map((line) => line.trim()).filter(Boolean);
  if (!urls.length) {
    say("control-message", "give at least one URL", true);
    return;
  }
  try {
    const answer = await call("POST", "/seeds", { urls });
    say("control-message", "queued " + answer.queued.length + ", known already " + answer.known.length);
    $("seeds").value = "";
  } catch (error) {
    const invalid = (error.answer && error.answer.invalid) || [];
    const lines = invalid.map((bad) => bad.url + ": " + bad.reason);
    say("control-message", [error.message, ...lines].join("\n"), true);
  }
}

function start() {
  const token = $("token");
  token.value = sessionStorage.getItem(TOKEN_KEY) || "";
  token.addEventListener("input", () => sessionStorage.setItem(TOKEN_KEY, token.value));
  $("search-form").addEventListener("submit", search);
  $("label-relevant").addEventListener("click", () => label(true));
  $("label-irrelevant").addEventListener("click", () => label(false));
  $("back").addEventListener("click", (event) => {
    event.preventDefault();
    window.location.hash = "";
  });
  $("uncertain-refresh").addEventListener("click", showUncertain);
  $("pause").addEventListener("click", () => setState("pause"));
  $("resume").addEventListener("click", () => setState("resume"));
  $("seeds-form").addEventListener("submit", addSeeds);
  window.addEventListener("hashchange", route);
  route();
  refreshStatus();
}

document.addEventListener("DOMContentLoaded", start);
