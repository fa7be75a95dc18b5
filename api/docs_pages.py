"""Swagger UI (/docs), ReDoc (/redoc) and GraphiQL (GET /graphql in a browser), served by
the app itself: no page loads anything from another host.

The JavaScript and CSS come from two PyPI packages installed with the project, never
copied into the repository by hand: `fastapi-offline` ships Swagger UI and ReDoc,
`graphene-django-graphiql-static` ships GraphiQL with React (only its static files are
used; it needs no Django). They are mounted under /static/.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

DOCS_ASSETS = "/static/docs"
GRAPHIQL_ASSETS = "/static/graphiql"
# The pages may load only from this server: a reference inside a bundle (ReDoc's footer logo
# on its own CDN) is blocked by the browser instead of leaking the reader's visit.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'"
)
HIDE_REDOCLY_LOGO = '<style>a[href^="https://redocly.com"] { display: none; }</style>'


def local_only(page: HTMLResponse) -> HTMLResponse:
    page.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    return page


def _package_folder(package: str, *parts: str) -> Path:
    folder = Path(str(files(package).joinpath(*parts)))
    if not folder.is_dir():
        raise RuntimeError(f"the {package} package has no {'/'.join(parts)} folder: reinstall it (make install)")
    return folder


def install_docs(app: FastAPI) -> None:
    """Mount the assets and add /docs, /docs/oauth2-redirect and /redoc (the app is built
    with docs_url=None, redoc_url=None, so FastAPI's CDN pages are not there)."""
    app.mount(DOCS_ASSETS, StaticFiles(directory=_package_folder("fastapi_offline", "static")), name="docs-assets")
    app.mount(
        GRAPHIQL_ASSETS,
        StaticFiles(
            directory=_package_folder("graphene_django_graphiql_static", "static", "graphene_django_graphiql_static")
        ),
        name="graphiql-assets",
    )
    openapi_url = app.openapi_url or "/openapi.json"

    @app.get("/docs", include_in_schema=False)
    def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return local_only(
            get_swagger_ui_html(
                openapi_url=f"{root}{openapi_url}",
                title=f"{app.title} - Swagger UI",
                oauth2_redirect_url=f"{root}/docs/oauth2-redirect",
                swagger_js_url=f"{root}{DOCS_ASSETS}/swagger-ui-bundle.js",
                swagger_css_url=f"{root}{DOCS_ASSETS}/swagger-ui.css",
                swagger_favicon_url=f"{root}{DOCS_ASSETS}/favicon.png",
                # validatorUrl: null keeps Swagger UI from sending the schema to its public validator.
                # persistAuthorization: false keeps a key typed into Authorize (the admin key too)
                # for the page's life only, out of localStorage, where any script on this origin
                # and the next person at the browser would read it.
                swagger_ui_parameters={"validatorUrl": None, "persistAuthorization": False},
            )
        )

    @app.get("/docs/oauth2-redirect", include_in_schema=False)
    def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        page = get_redoc_html(
            openapi_url=f"{root}{openapi_url}",
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{root}{DOCS_ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{DOCS_ASSETS}/favicon.png",
            with_google_fonts=False,
        )
        html = bytes(page.body).decode().replace("</head>", f"{HIDE_REDOCLY_LOGO}\n</head>", 1)
        return local_only(HTMLResponse(html))


# One string, .format()ted: split into pieces only where a line of the page passes 120 characters.
GRAPHIQL_PAGE = (
    """<!doctype html>
<html>
<head>
  <meta charset="utf-8">
  <title>Market Intelligence Service - GraphiQL</title>
  <link rel="icon" href="{docs}/favicon.png">
  <style>html, body, #graphiql {{ height: 100%; margin: 0; width: 100%; overflow: hidden; }}</style>
  <link rel="stylesheet" href="{assets}/graphiql.min.css">
  <script src="{assets}/react.production.min.js"></script>
  <script src="{assets}/react-dom.production.min.js"></script>
  <script src="{assets}/graphiql.min.js"></script>
</head>
<body>
  <div id="graphiql">Loading GraphiQL...</div>
  <script>
    // Put {{"X-API-Key": "svc-sk-..."}} in the Headers pane; ?q=... prefills the query pane (a `query`
    // parameter would be run as a GraphQL GET request instead of opening this page). Headers never
    // come from the URL: a link would load another's key, the reader's trades then running on its
    // account, or leave a key in logs and referrers.
    const parameters = new URLSearchParams(window.location.search);
    // Without a key the server's answer is a 401 problem document; say what to do instead,
    // and show any other problem document's detail as a GraphQL error.
    const served = GraphiQL.createFetcher({{ url: window.location.pathname, enableIncrementalDelivery: false }});
    const noKey = 'No API key yet: put {{"X-API-Key": "svc-sk-..."}} in the Headers pane below, then ' +
                  'press Run. The operator issues keys with the admin key (POST /api/keys/generate).';
    const fetcher = async (params, options) => {{
      const headers = (options && options.headers) || {{}};
      if (!Object.keys(headers).some((name) => name.toLowerCase() === "x-api-key")) {{
        return {{ errors: [{{ message: noKey }}] }};
      }}
      const answer = await served(params, options);
      return answer && answer.status && answer.detail """
    "? {{ errors: [{{ message: `${{answer.status}} ${{answer.title}}: ${{answer.detail}}` }}] }} : answer;"
    """
    }};
    // GraphiQL 2.1 writes each run's headers into its history (graphiql:queries and :favorites)
    // even with shouldPersistHeaders off: that history is stored without them, so a typed key
    // lasts for the page only, out of reach of the next person at the browser.
    const withoutHeaders = (key, value) => {{
      if (!/^graphiql:(queries|favorites)$/.test(key)) return value;
      const stored = JSON.parse(value);
      stored.queries = (stored.queries || []).map(({{ headers, ...kept }}) => kept);
      return JSON.stringify(stored);
    }};
    const ours = () => Object.keys(localStorage).filter((key) => key.startsWith("graphiql:"));
    const storage = {{
      getItem: (key) => localStorage.getItem(key),
      setItem: (key, value) => localStorage.setItem(key, withoutHeaders(key, value)),
      removeItem: (key) => localStorage.removeItem(key),
      clear: () => ours().forEach((key) => localStorage.removeItem(key)),
      get length() {{ return ours().length; }},
    }};
    ReactDOM.render(
      React.createElement(GraphiQL, {{
        fetcher: fetcher,
        defaultQuery: "# Put your key in the Headers pane below: {{\\"X-API-Key\\": \\"svc-sk-...\\"}}\\n"""
    """{{ instruments(first: 5) {{ nodes {{ symbol name latestPrediction {{ score action }} }} }} }}\\n",
        query: parameters.get("q") || undefined,
        defaultEditorToolsVisibility: true,
        headerEditorEnabled: true,
        shouldPersistHeaders: false,
        storage: storage,
      }}),
      document.getElementById("graphiql"),
    );
  </script>
</body>
</html>
"""
)


def graphiql_html() -> str:
    """The GraphiQL page strawberry's router serves at GET /graphql to a browser."""
    return GRAPHIQL_PAGE.format(assets=GRAPHIQL_ASSETS, docs=DOCS_ASSETS)
