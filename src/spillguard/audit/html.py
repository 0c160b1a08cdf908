"""One self-contained HTML page of the status tree: inline CSS and JS, nothing fetched.

Clicking a heading sorts by that column (again: the other way). A URL fragment
``#sort=COLUMN`` or ``#sort=COLUMN:desc`` sorts on load, so a link can share a view.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from spillguard.audit.status import rows
from spillguard.audit.table import COLUMNS, HEADINGS

if TYPE_CHECKING:
    from typing import TextIO

_NUMERIC = frozenset({"findings", "blocking"})

_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;width:100%}
th,td{border:1px solid #ccc;padding:.3em .6em;text-align:left;font-size:.9em}
th{background:#eee;cursor:pointer;user-select:none}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
td.num{text-align:right}td{white-space:nowrap}td:last-child{white-space:normal}
tr.vulnerable td:nth-child(4),tr.failed td:nth-child(4){color:#b00;font-weight:bold}
tr.outdated td:nth-child(4),tr.behind td:nth-child(4){color:#a60}
tr.clean td:nth-child(4){color:#070}
"""

_SCRIPT = """
(function(){
  var table=document.getElementById('status'),body=table.tBodies[0];
  var heads=Array.prototype.slice.call(table.tHead.rows[0].cells);
  function sortBy(index,descending){
    var numeric=heads[index].dataset.type==='number';
    var list=Array.prototype.slice.call(body.rows);
    list.sort(function(a,b){
      var x=a.cells[index].textContent,y=b.cells[index].textContent;
      var d=numeric?(parseFloat(x)||0)-(parseFloat(y)||0):x.localeCompare(y);
      return descending?-d:d;
    });
    list.forEach(function(row){body.appendChild(row);});
    heads.forEach(function(h,i){
      if(i===index){h.setAttribute('aria-sort',descending?'descending':'ascending');}
      else{h.removeAttribute('aria-sort');}
    });
  }
  heads.forEach(function(h,i){
    h.addEventListener('click',function(){
      sortBy(i,h.getAttribute('aria-sort')==='ascending');
    });
  });
  var m=/sort=([A-Za-z]+)(:desc)?/.exec(location.hash);
  if(m){
    var index=heads.findIndex(function(h){return h.dataset.key===m[1];});
    if(index>=0){sortBy(index,!!m[2]);}
  }
})();
"""


def write_html(tree: dict[str, Any], stream: TextIO) -> None:
    summary = tree["summary"]
    heads = "".join(
        f'<th data-key="{key}" data-type="{"number" if key in _NUMERIC else "text"}">'
        f"{html.escape(heading)}</th>"
        for key, heading in zip(COLUMNS, HEADINGS, strict=True)
    )
    body = "\n".join(
        f'<tr class="{html.escape(row["state"])}">'
        + "".join(
            f"<td{' class=num' if key in _NUMERIC else ''}>{html.escape(str(row[key]))}</td>"
            for key in COLUMNS
        )
        + "</tr>"
        for row in rows(tree)
    )
    stream.write(
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
        f"<title>spillguard audit</title><style>{_STYLE}</style></head><body>\n"
        "<h1>spillguard audit</h1>\n"
        f"<p id=summary>{summary['repositories']} repositories ({summary['failed']} failed), "
        f"{summary['branches']} branches, {summary['findings']} findings, "
        f"{summary['blocking']} blocking</p>\n"
        f"<table id=status><thead><tr>{heads}</tr></thead><tbody>\n{body}\n</tbody></table>\n"
        f"<script>{_SCRIPT}</script></body></html>\n"
    )
