/**
 * The Python client, emitted from the OpenAPI document: one method per operation (named by its
 * operationId, documented by its summary, description, parameters and problem codes) over a runtime of
 * the standard library only (python-runtime.py, copied as it is), and the problem codes as constants.
 */
import { readFileSync } from 'node:fs';

type Json = Record<string, unknown>;

interface Schema {
  type?: string | string[];
  enum?: unknown[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
  description?: string;
  additionalProperties?: Schema | boolean;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  description?: string;
  schema?: Schema;
}

interface Operation {
  operationId: string;
  summary?: string;
  description?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>;
}

export const PYTHON_PACKAGE = 'clients/python';
const GENERATED = 'Generated from the OpenAPI document by scripts/clients.ts (npm run clients): do not edit.';
const runtimeSource = readFileSync(new URL('./python-runtime.py', import.meta.url), 'utf8');
const WIDTH = 100;

const PYTHON_KEYWORDS = new Set([
  'from',
  'import',
  'in',
  'is',
  'not',
  'and',
  'or',
  'class',
  'def',
  'global',
  'pass',
]);

export function snakeCase(name: string): string {
  const snake = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase();
  return PYTHON_KEYWORDS.has(snake) ? `${snake}_` : snake;
}

const pyString = (value: string) => JSON.stringify(value);

const scalarTypes: Record<string, string> = {
  string: 'str',
  integer: 'int',
  number: 'float',
  boolean: 'bool',
};

function pyType(schema: Schema | undefined): string {
  const type = Array.isArray(schema?.type) ? schema.type.find((t) => t !== 'null') : schema?.type;
  if (type === 'array') return `list[${pyType(schema?.items)}]`;
  if (type === 'object') {
    const members = schema?.additionalProperties;
    return `dict[str, ${typeof members === 'object' ? pyType(members) : 'Any'}]`;
  }
  return (type && scalarTypes[type]) ?? 'Any';
}

/** Words wrapped to lines of at most WIDTH characters after `indent`; a paragraph's later lines get `hang`. */
function wrap(text: string, indent: string, hang = ''): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split(/\n+/)) {
    let line = '';
    for (const word of paragraph.split(/\s+/).filter(Boolean)) {
      if (line && indent.length + line.length + 1 + word.length > WIDTH) {
        lines.push(line);
        line = hang + word;
      } else {
        line = line ? `${line} ${word}` : word;
      }
    }
    if (line) lines.push(line);
  }
  return lines.map((line) => `${indent}${line}`);
}

/** A docstring's first lines: its summary wrapped, after the opening quotes. */
function opening(summary: string, indent: string): string[] {
  const [first = '', ...rest] = wrap(`"""${docText(summary)}`, indent);
  return [first, ...rest];
}

/** Text safe inside a """docstring""". */
const docText = (text: string) => text.replace(/\\/g, '\\\\').replace(/"""/g, '\\"\\"\\"');

function bodySchema(operation: Operation): Schema | undefined {
  const schema = operation.requestBody?.content?.['application/json']?.schema;
  return schema?.anyOf?.find((s) => s.type === 'object') ?? schema;
}

function successSchema(operation: Operation): Schema | undefined {
  const ok = Object.entries(operation.responses ?? {}).find(([status]) => status.startsWith('2'));
  return ok?.[1].content?.['application/json']?.schema;
}

/** An operation answers pages when it takes a cursor and its JSON has `data` and `meta.next_cursor`. */
function isPaged(operation: Operation): boolean {
  const schema = successSchema(operation);
  return (
    (operation.parameters ?? []).some((p) => p.in === 'query' && p.name === 'cursor') &&
    schema?.properties?.data?.type === 'array' &&
    schema.properties.meta?.properties?.next_cursor !== undefined
  );
}

function problemCodes(operation: Operation): string[] {
  return Object.entries(operation.responses ?? {}).flatMap(([status, response]) => {
    const codes = /Codes: ([a-z_, ]+)/.exec(response.description ?? '')?.[1];
    return codes ? [`${status}: ${codes}`] : [];
  });
}

interface Argument {
  python: string;
  parameter?: Parameter;
  annotation: string;
  required: boolean;
  description: string;
}

function operationArguments(operation: Operation): { positional: Argument[]; keyword: Argument[] } {
  const parameters = (operation.parameters ?? []).filter((p) => p.in !== 'cookie');
  const argument = (parameter: Parameter): Argument => ({
    python: snakeCase(parameter.name),
    parameter,
    annotation: pyType(parameter.schema),
    required: parameter.in === 'path' || parameter.required === true,
    description: parameter.description ?? parameter.schema?.description ?? '',
  });
  const positional = parameters.filter((p) => p.in === 'path').map(argument);
  const keyword = parameters.filter((p) => p.in !== 'path').map(argument);
  const body = bodySchema(operation);
  if (body) {
    const members = Object.entries(body.properties ?? {}).map(([name, schema]) => {
      const required = body.required?.includes(name) ? ', required' : '';
      return `${name} (${pyType(schema)}${required})${schema.description ? `: ${schema.description}` : ''}`;
    });
    const bodyArgument: Argument = {
      python: 'body',
      annotation: 'dict[str, Any]',
      required: operation.requestBody?.required === true,
      description:
        members.length > 0 ? `A JSON object. ${members.join('; ').replace(/\.?$/, '.')}` : 'The JSON body.',
    };
    (bodyArgument.required ? positional : keyword).push(bodyArgument);
  }
  const names = [...positional, ...keyword].map((a) => a.python);
  const clash = names.find((name, i) => names.indexOf(name) !== i);
  if (clash) throw new Error(`${operation.operationId}: two parameters are named ${clash} in Python`);
  return { positional, keyword };
}

function signature(
  name: string,
  argumentsOf: { positional: Argument[]; keyword: Argument[] },
  returns: string,
): string[] {
  if (argumentsOf.positional.length + argumentsOf.keyword.length === 0) {
    return [`    def ${name}(self) -> ${returns}:`];
  }
  const lines = [`    def ${name}(`, '        self,'];
  for (const a of argumentsOf.positional) lines.push(`        ${a.python}: ${a.annotation},`);
  if (argumentsOf.keyword.length > 0) lines.push('        *,');
  for (const a of argumentsOf.keyword) {
    lines.push(
      a.required
        ? `        ${a.python}: ${a.annotation},`
        : `        ${a.python}: ${a.annotation} | None = None,`,
    );
  }
  return [...lines, `    ) -> ${returns}:`];
}

function docstring(
  operation: Operation,
  method: string,
  path: string,
  args: Argument[],
  returns: string,
): string[] {
  const indent = '        ';
  const lines = [...opening(operation.summary ?? operation.operationId, indent), ''];
  if (operation.description) lines.push(...wrap(docText(operation.description), indent), '');
  lines.push(`${indent}${method.toUpperCase()} ${path} (operationId ${operation.operationId})`);
  if (args.length > 0) {
    lines.push('', `${indent}Args:`);
    for (const a of args) {
      const where = a.parameter ? `the ${a.parameter.in} parameter ${a.parameter.name}` : a.annotation;
      lines.push(...wrap(docText(`${a.python}: ${a.description || where}`), `${indent}    `, '    '));
    }
  }
  lines.push('', `${indent}Returns:`, ...wrap(returns, `${indent}    `, '    '));
  const codes = problemCodes(operation);
  if (codes.length > 0) {
    lines.push(
      '',
      `${indent}Raises:`,
      `${indent}    ProblemError: on an error answer; the codes it documents:`,
    );
    for (const code of codes) lines.push(...wrap(code, `${indent}        `, '    '));
  }
  return [...lines, `${indent}"""`];
}

function requestCall(method: string, path: string, args: Argument[], cursor?: string): string[] {
  const of = (where: Parameter['in']) => args.filter((a) => a.parameter?.in === where);
  const pathArgs = of('path').map((a) => `${a.python}=${a.python}`);
  const pathExpression =
    pathArgs.length > 0 ? `self._path(${pyString(path)}, ${pathArgs.join(', ')})` : pyString(path);
  const value = (a: Argument) => {
    if (cursor && a.parameter?.name === 'cursor') return cursor;
    // One key per call, so every retry of this call sends the same one.
    if (a.parameter?.name === 'Idempotency-Key' && !a.required) return `${a.python} or new_idempotency_key()`;
    return a.python;
  };
  const entries = (list: Argument[]) =>
    list.map((a) => `${pyString(a.parameter?.name ?? a.python)}: ${value(a)}`);
  const lines = [`            ${pyString(method.toUpperCase())},`, `            ${pathExpression},`];
  const dict = (name: string, items: string[]) =>
    items.length === 0
      ? []
      : [`            ${name}={`, ...items.map((item) => `                ${item},`), '            },'];
  lines.push(...dict('query', entries(of('query'))));
  if (args.some((a) => a.python === 'body')) lines.push('            body=body,');
  lines.push(...dict('headers', entries(of('header'))));
  return lines;
}

function operationMethods(path: string, method: string, operation: Operation): string[] {
  const name = snakeCase(operation.operationId);
  const args = operationArguments(operation);
  const all = [...args.positional, ...args.keyword];
  const paged = isPaged(operation);
  const returns = paged
    ? 'A Page: its rows in ``data``, its ``meta`` (``next_cursor`` and the rest) and the response headers; other media types as text.'
    : 'The answer: JSON as dicts and lists, any other media type as text, None when empty.';
  const call = requestCall(method, path, all);
  const lines = [
    ...signature(name, args, paged ? 'Page' : 'Any'),
    ...docstring(operation, method, path, all, returns),
    paged ? '        return self._page(' : '        return self._body(',
    '            self.request(',
    ...call.map((line) => `    ${line}`),
    '            )',
    '        )',
  ];
  if (!paged) return lines;
  // The pages: the same arguments but a per-page idempotency key (a key is for one read).
  const iterArgs = {
    positional: args.positional,
    keyword: args.keyword.filter((a) => a.parameter?.name !== 'Idempotency-Key'),
  };
  const passed = [
    ...iterArgs.positional.map((a) => a.python),
    ...iterArgs.keyword.filter((a) => a.python !== 'cursor').map((a) => `${a.python}=${a.python}`),
    'cursor=next_cursor',
  ];
  const keyed = args.keyword.some((a) => a.parameter?.name === 'Idempotency-Key');
  const summary = `Every page of ${name}() from \`\`cursor\`\` (or the first) on, following \`\`meta.next_cursor\`\`: one request per page${keyed ? ', each with its own idempotency key' : ''}.`;
  const pages = [
    '        return Pages(',
    `            lambda next_cursor: self.${name}(`,
    ...passed.map((argument) => `                ${argument},`),
    '            ),',
    '            cursor,',
    '        )',
  ];
  return [
    ...lines,
    '',
    ...signature(`iter_${name}`, iterArgs, 'Pages'),
    ...opening(summary, '        '),
    '',
    `        Takes the arguments of ${name}(); iterate the result for pages, call .rows() for rows or`,
    '        .to_pandas() for one DataFrame of them all.',
    '        """',
    ...pages,
  ];
}

function clientModule(document: Json): string {
  const paths = (document.paths ?? {}) as Record<string, Record<string, Operation>>;
  const methods = Object.entries(paths).flatMap(([path, operations]) =>
    Object.entries(operations).flatMap(([method, operation]) => [
      '',
      ...operationMethods(path, method, operation),
    ]),
  );
  const info = (document.info ?? {}) as { title?: string };
  return [
    `"""${docText(info.title ?? 'API')}: one method per operation of the OpenAPI document.`,
    '',
    GENERATED,
    '"""',
    '',
    'from __future__ import annotations',
    '',
    'from typing import Any',
    '',
    'from ._runtime import Page, Pages, Transport, new_idempotency_key',
    '',
    '',
    'class Client(Transport):',
    '    """The service\'s API: ``Client("https://data.example.com", api_key="tmd_live_...")``."""',
    '',
    '    @staticmethod',
    '    def _body(answer: tuple[Any, dict[str, str]]) -> Any:',
    '        return answer[0]',
    ...methods,
    '',
  ].join('\n');
}

function codesModule(document: Json): string {
  const schemas = ((document.components as Json | undefined)?.schemas ?? {}) as Record<string, Schema>;
  const codes = (schemas.Problem?.properties?.code?.enum ?? []) as string[];
  return [
    '"""The codes of ProblemError.code: the closed list the API answers, and the client\'s own."""',
    '',
    `# ${GENERATED}`,
    '',
    '',
    'class Code:',
    ...codes.map((code) => `    ${code.toUpperCase()} = ${pyString(code)}`),
    "    # An error answer that was no problem+json (a proxy's page): the client's own code.",
    '    UNEXPECTED_RESPONSE = "unexpected_response"',
    '',
  ].join('\n');
}

function initModule(document: Json): string {
  const info = (document.info ?? {}) as { title?: string; version?: string; description?: string };
  return [
    `"""${docText(info.title ?? 'API')}: a client of the standard library only.`,
    '',
    ...wrap(docText(info.description ?? ''), ''),
    '',
    GENERATED,
    '"""',
    '',
    'from ._runtime import Page, Pages, ProblemError, retry_after_seconds',
    'from .client import Client',
    'from .codes import Code',
    '',
    `__version__ = ${pyString(info.version ?? '0')}`,
    '__all__ = ["Client", "Code", "Page", "Pages", "ProblemError", "retry_after_seconds"]',
    '',
  ].join('\n');
}

function pyproject(document: Json): string {
  const info = (document.info ?? {}) as { title?: string; version?: string };
  return [
    `# ${GENERATED}`,
    '[project]',
    'name = "tmd-client"',
    `version = ${pyString(info.version ?? '0')}`,
    `description = ${pyString(`${info.title ?? 'API'}: the Python client (standard library only)`)}`,
    'requires-python = ">=3.9"',
    'dependencies = []',
    '',
    '[project.optional-dependencies]',
    'pandas = ["pandas"]',
    '',
    '[build-system]',
    'requires = ["setuptools>=61"]',
    'build-backend = "setuptools.build_meta"',
    '',
    '[tool.setuptools]',
    'packages = ["tmd_client"]',
    '',
  ].join('\n');
}

/** The Python client's files, by path from the repository's root. */
export function pythonClient(document: Json): Map<string, string> {
  return new Map([
    [`${PYTHON_PACKAGE}/pyproject.toml`, pyproject(document)],
    [`${PYTHON_PACKAGE}/tmd_client/__init__.py`, initModule(document)],
    [`${PYTHON_PACKAGE}/tmd_client/_runtime.py`, `# ${GENERATED}\n${runtimeSource}`],
    [`${PYTHON_PACKAGE}/tmd_client/client.py`, clientModule(document)],
    [`${PYTHON_PACKAGE}/tmd_client/codes.py`, codesModule(document)],
  ]);
}
