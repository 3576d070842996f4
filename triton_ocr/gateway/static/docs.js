"use strict";
// /docs: the gateway's endpoints as openapi.json describes them, written out plainly (Swagger
// UI would load from a CDN). Everything is set as text, never as HTML.

const $ = (selector) => document.querySelector(selector);

function element(name, text = "", className = "") {
  const made = document.createElement(name);
  if (text) made.textContent = text;
  if (className) made.className = className;
  return made;
}

function typeOf(schema, spec) {
  if (!schema) return "";
  if (schema.$ref) return typeOf(spec.components.schemas[schema.$ref.split("/").pop()], spec);
  if (schema.enum) return schema.enum.join(" | ");
  if (schema.type === "array") return `${typeOf(schema.items, spec)}[]`;
  if (schema.anyOf) return schema.anyOf.map((s) => typeOf(s, spec)).join(" | ");
  return [schema.type, schema.format].filter(Boolean).join(", ");
}

function table(headings, rows) {
  const made = element("table");
  const head = made.createTHead().insertRow();
  for (const heading of headings) head.append(element("th", heading));
  const body = made.createTBody();
  for (const row of rows) {
    const line = body.insertRow();
    for (const cell of row) line.insertCell().append(element("code", String(cell)));
  }
  return made;
}

function endpoint(path, method, operation, spec) {
  const section = element("section", "", "endpoint");
  const heading = element("h2");
  heading.append(element("span", method.toUpperCase(), "method"), " ", path);
  section.append(heading);
  if (operation.summary) section.append(element("p", operation.summary));
  if (operation.description) section.append(element("p", operation.description, "description"));
  const parameters = operation.parameters || [];
  if (parameters.length) {
    section.append(element("h3", "Parameters"));
    const rows = parameters.map((p) => [p.name, p.in, typeOf(p.schema, spec), p.required ? "yes" : "no"]);
    section.append(table(["name", "in", "type", "required"], rows));
  }
  const body = operation.requestBody && operation.requestBody.content;
  if (body) {
    section.append(element("h3", "Request body"));
    section.append(table(["media type", "schema"], Object.entries(body).map(
      ([media, content]) => [media, typeOf(content.schema, spec) || "object"])));
  }
  const answers = Object.entries(operation.responses || {}).map(([code, answer]) =>
    [code, answer.description || "", Object.keys(answer.content || {}).join(", ")]);
  if (answers.length) {
    section.append(element("h3", "Answers"));
    section.append(table(["status", "meaning", "media types"], answers));
  }
  return section;
}

async function show() {
  try {
    const response = await fetch("openapi.json");
    if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
    const spec = await response.json();
    const about = [spec.info.title, spec.info.version, spec.info.summary].filter(Boolean);
    $("#summary").textContent = about.join(" · ") + ". Errors are problem+json: {\"error\", \"status\"}.";
    for (const [path, methods] of Object.entries(spec.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        $("#endpoints").append(endpoint(path, method, operation, spec));
      }
    }
  } catch (error) {
    $("#summary").textContent = `openapi.json could not be read: ${error.message}`;
  }
}

show();
