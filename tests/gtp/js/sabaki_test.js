// Drives a miai GTP engine with @sabaki/gtp, the GTP client library Sabaki uses, the way Sabaki does:
// pipelined startup, ControllerStateTracker syncs (handicap, passes, undo, replay), genmove_analyze, and
// analysis stopped by the next command (Sabaki's sendAbort sends `protocol_version`).
//
// The engine command line comes from MIAI_GTP_COMMAND (a JSON array). Prints one JSON summary line on
// success and exits 0; on failure prints the error and exits 1.

'use strict'

const assert = require('assert')
const {Controller, ControllerStateTracker} = require('@sabaki/gtp')

const VERTEX = /^[A-HJ-Za-hj-z]\d+$/
// Sabaki's analysis segment grammar: split on /\s*info\s+/; each segment ends with the pv vertex run.
const PV_RUN = /(pass|[A-Za-z]\d+)(\s+(pass|[A-Za-z]\d+))*$/

function parseAnalysisLine(line, isKata) {
  return line
    .split(/\s*info\s+/)
    .slice(1)
    .map(segment => {
      let match = segment.trim().match(PV_RUN)
      assert(match, `segment without a trailing pv: ${segment}`)
      let head = segment.trim().slice(0, match.index).trim().split(/\s+/)
      assert.strictEqual(head[head.length - 1], 'pv', `pv is not last: ${segment}`)
      let pairs = {}
      for (let i = 0; i + 1 < head.length - 1; i += 2) pairs[head[i]] = head[i + 1]
      let winrate = pairs.winrate
      if (isKata) {
        assert(winrate.includes('.'), `kata winrate without '.': ${winrate}`)
        winrate = parseFloat(winrate)
      } else {
        assert(/^-?\d+$/.test(winrate), `lz winrate not an integer: ${winrate}`)
        winrate = parseInt(winrate, 10) / 10000
      }
      return {
        move: pairs.move,
        visits: parseInt(pairs.visits, 10),
        winrate,
        scoreLead: pairs.scoreLead == null ? null : parseFloat(pairs.scoreLead),
        pv: match[0].split(/\s+/)
      }
    })
}

async function send(controller, name, ...args) {
  let response = await controller.sendCommand({name, args})
  assert(!response.error, `${name} ${args.join(' ')} failed: ${response.content}`)
  return response.content
}

async function runAnalysis(controller, name, color, infoLinesWanted) {
  let infoLines = []
  let abortSent = null
  let analysis = controller.sendCommand({name, args: [color, '10']}, ({line}) => {
    if (line.startsWith('info ')) infoLines.push(line)
    if (infoLines.length >= infoLinesWanted && abortSent == null) {
      // What Sabaki's sendAbort does: any command ends the analysis; protocol_version is harmless.
      abortSent = controller.sendCommand({name: 'protocol_version'})
    }
  })
  let response = await analysis
  assert(!response.error, `${name} failed: ${response.content}`)
  assert(abortSent != null, `${name} ended before ${infoLinesWanted} info lines`)
  let abort = await abortSent
  assert.strictEqual(abort.content, '2', 'the command that stopped the analysis was not answered')
  return infoLines.map(line => parseAnalysisLine(line, name.startsWith('kata-')))
}

async function main() {
  let [path, ...args] = JSON.parse(process.env.MIAI_GTP_COMMAND)
  let controller = new Controller(path, args)
  let tracker = new ControllerStateTracker(controller)
  let sent = []
  let stderr = []
  controller.on('command-sent', ({command}) => sent.push(command.name))
  controller.on('stderr', ({content}) => stderr.push(content))
  controller.start()
  let exited = new Promise(resolve => controller.process.once('exit', code => resolve(code)))
  let summary = {}

  // Startup, pipelined exactly like Sabaki's EngineSyncer.
  let [name, version, protocol, list] = await Promise.all(
    ['name', 'version', 'protocol_version', 'list_commands'].map(n => controller.sendCommand({name: n}))
  )
  assert(!name.error && name.content.length > 0)
  assert(/^\d+\.\d+/.test(version.content), `version ${version.content}`)
  assert.strictEqual(protocol.content, '2')
  let commands = list.content.split('\n').map(x => x.trim())
  for (let c of ['lz-analyze', 'kata-analyze', 'kata-genmove_analyze', 'undo', 'set_free_handicap']) {
    assert(commands.includes(c), `list_commands lacks ${c}`)
  }
  summary.name = name.content

  // A handicap game with passes, synced by the state tracker.
  let history = [
    {name: 'set_free_handicap', args: ['C3', 'G7']},
    {name: 'play', args: ['W', 'E5']},
    {name: 'play', args: ['B', 'pass']},
    {name: 'play', args: ['W', 'C7']},
    {name: 'play', args: ['B', 'pass']}
  ]
  await tracker.sync({komi: 0.5, boardsize: [9, 9], history})
  assert.strictEqual(await send(controller, 'list_stones', 'black'), 'G7 C3')
  assert.strictEqual(await send(controller, 'list_stones', 'white'), 'C7 E5')

  // Extending the game sends only the new move; going back uses undo.
  sent.length = 0
  await tracker.sync({komi: 0.5, boardsize: [9, 9], history: [...history, {name: 'play', args: ['W', 'D4']}]})
  assert.deepStrictEqual(sent, ['play'])
  sent.length = 0
  await tracker.sync({komi: 0.5, boardsize: [9, 9], history: history.slice(0, 4)})
  assert(sent.includes('undo'), `no undo in ${sent}`)
  assert(!sent.includes('clear_board'), 'undo was possible but the game was replayed')
  assert.deepStrictEqual(sent.filter(x => x === 'undo').length, 2)
  assert.strictEqual(await send(controller, 'list_stones', 'white'), 'C7 E5')
  assert.strictEqual(await send(controller, 'list_stones', 'black'), 'G7 C3')

  // A different game: replay from clear_board (handicap stones cannot be undone).
  sent.length = 0
  let other = [{name: 'set_free_handicap', args: ['D4', 'F6', 'E5']}, {name: 'play', args: ['W', 'C3']}]
  await tracker.sync({komi: 0.5, boardsize: [9, 9], history: other})
  assert(sent.includes('clear_board'))
  assert.strictEqual(await send(controller, 'list_stones', 'black'), 'F6 E5 D4')
  summary.syncs = 4

  // genmove_analyze: the tracker records the move from the `play` line, and the engine played it.
  let genmove = await controller.sendCommand({name: 'kata-genmove_analyze', args: ['B', '10']})
  assert(!genmove.error, genmove.content)
  let playLine = genmove.content.split('\n').find(line => line.startsWith('play '))
  assert(playLine, `no play line in ${genmove.content}`)
  let move = playLine.slice(5).trim()
  assert(VERTEX.test(move) || move === 'pass', move)
  let last = tracker.state.history[tracker.state.history.length - 1]
  assert.deepStrictEqual(last, {name: 'play', args: ['B', move.toUpperCase()]})
  if (move !== 'pass') assert((await send(controller, 'list_stones', 'black')).split(' ').includes(move))
  summary.genmove = move

  // Analysis in both formats, each stopped by the next command, which is answered.
  for (let [command, color] of [['lz-analyze', 'W'], ['kata-analyze', 'B']]) {
    let parsed = await runAnalysis(controller, command, color, 3)
    assert(parsed.length >= 3)
    for (let info of parsed) {
      assert(info.length > 0)
      for (let segment of info) {
        assert(VERTEX.test(segment.move) || segment.move === 'pass', segment.move)
        assert(segment.visits >= 0 && segment.winrate >= 0 && segment.winrate <= 1, JSON.stringify(segment))
        assert(segment.pv.length >= 1)
        if (command === 'kata-analyze') assert(segment.scoreLead != null, 'kata-analyze without scoreLead')
      }
    }
    summary[command] = parsed.length
  }
  // The engine is in sync after all that: the board still answers normally.
  assert.strictEqual(await send(controller, 'protocol_version'), '2')

  await controller.stop()
  let code = await exited
  assert.strictEqual(code, 0, `engine exit code ${code}`)
  summary.exitCode = code
  summary.stderrLines = stderr.length
  console.log(JSON.stringify(summary))
}

let timer = setTimeout(() => {
  console.error('timed out')
  process.exit(2)
}, 90000)

main()
  .then(() => {
    clearTimeout(timer)
    process.exit(0)
  })
  .catch(err => {
    console.error(err && err.stack ? err.stack : err)
    process.exit(1)
  })
