// Parses MSQ statements with druid-query-toolkit (the parser of Druid's web console) and
// prints their structure as JSON, for tests/druid/test_msq_statements.py.
// stdin: a JSON array of SQL texts; stdout: a JSON array, one object per statement:
//   {ok, error, table, overwrite, columns: [output names], time: SQL of the __time
//    expression, externFn, extern: [3 literal strings], where, groupBy, partitionedBy,
//    clusteredBy, endsWithSemicolon}
const { SqlQuery } = require('druid-query-toolkit');

const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = input.map((sql) => {
  const r = { ok: false, endsWithSemicolon: /;\s*$/.test(sql) };
  try {
    const q = SqlQuery.parse(sql);
    const rc = q.replaceClause;
    r.table = rc ? rc.table.toString() : null;
    r.overwrite = rc ? (rc.whereClause ? rc.whereClause.toString() : 'ALL') : null;
    const sel = q.getSelectExpressionsArray();
    r.columns = sel.map((e) => e.getOutputName());
    r.time = sel.length ? sel[0].getUnderlyingExpression().toString() : null;
    const table = q.fromClause ? q.fromClause.expressions.first() : null;
    const ext = table && table.args ? table.args.first() : null;
    r.tableFn = table && table.functionName ? table.functionName.toString() : null;
    r.externFn = ext && ext.functionName ? ext.functionName.toString() : null;
    r.extern = ext && ext.args ? ext.args.values.map((a) => a.value) : [];
    r.where = q.whereClause ? q.whereClause.toString() : null;
    r.groupBy = q.groupByClause ? q.groupByClause.toString() : null;
    r.partitionedBy = q.partitionedByClause ? q.partitionedByClause.toString() : null;
    r.clusteredBy = q.clusteredByClause ? q.clusteredByClause.toString() : null;
    r.ok = true;
  } catch (e) {
    r.error = String(e && e.message ? e.message : e);
  }
  return r;
});
process.stdout.write(JSON.stringify(out));
