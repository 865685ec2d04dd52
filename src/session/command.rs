//! The one command table: every `:` command's name, aliases, usage, help, the
//! kind of each argument, whether it writes a file or pages in the REPL, and its
//! handler. Parsing a command line against its row gives a [`Command`] once
//! (its words sorted into names, keywords, flags, settings and a file); a row
//! whose command takes keywords or flags reads them into that command's typed
//! arguments (`args.rs`) and hands those to its handler. Dispatch, `:help`,
//! completion (`repl/helper.rs`) and the errors all read the table. Adding a
//! command is one row and its handler.

use super::args::{ForwardArgs, PictureArgs};
use super::listings::OrderListing;
use super::{Event, PictureFormat, Session, SessionError, Target, nearest};
use crate::syntax::Ident;

/// What one argument of a command is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// A variable name (completed from the session's variables).
    Name,
    /// Any number of variable names.
    Names,
    /// A file name (completed from the file system); `-` is standard output.
    File,
    /// A help topic: a command, function or constant.
    Topic,
    /// Two numbers, a range (`-3 3`).
    Range,
    /// Significant digits, 1 to 17, or `full` (`:precision`).
    Digits,
    /// A TCP port number (`:serve`).
    Port,
    /// A whole number (`:seed N`); the handler reads it.
    Whole,
    /// One of these words, in any position (`all`, `kahn`, `md`, `tex`).
    Keyword(&'static [&'static str]),
    /// This word, in any position, followed by a number (`--step 3`); the
    /// handler reads the number.
    Numbered(&'static str),
    /// The rest of the line, any words (`:expect ∂L/∂W = 0.5`); the handler
    /// reads the statement's text.
    Text,
    /// A word starting with this key, in any position, with its value after
    /// the `=` (`lr=0.5`, the key written with its `=`); the handler reads
    /// the value.
    Setting(&'static str),
}

/// One argument of a command: its kind and whether it may be left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    /// What the argument is.
    pub arg: Arg,
    /// Whether it may be left out.
    pub optional: bool,
}

const fn required(arg: Arg) -> Param {
    Param {
        arg,
        optional: false,
    }
}

const fn optional(arg: Arg) -> Param {
    Param {
        arg,
        optional: true,
    }
}

const ALL: Param = optional(Arg::Keyword(&["all"]));

/// How a command runs: on the session, with its parsed arguments.
pub type Handler = fn(&mut Session, &Command, &mut Vec<Event>) -> Result<(), SessionError>;

/// One row of the command table.
pub struct CommandSpec {
    /// The name, without the colon.
    pub name: &'static str,
    /// Other names for the same command (`:order` for `:topo`).
    pub aliases: &'static [&'static str],
    /// The arguments as `:help` shows them: `NAME [FROM TO]`.
    pub usage: &'static str,
    /// What the command does, for `:help`.
    pub help: &'static str,
    /// The arguments, in order (keywords may come anywhere).
    pub params: &'static [Param],
    /// Writes a file, so `-f` / `--force` (replace an existing file) is accepted.
    pub writes: bool,
    /// How the session and the front ends treat it besides its handler.
    pub traits: Traits,
    /// What a wrong use is told, after `` `:name` ``: "takes one name".
    pub takes: &'static str,
    /// An example for that error; empty: "type just `:name`".
    pub example: &'static str,
    /// What it does when the output is a vector or a matrix.
    pub tensors: TensorCommand,
    /// Runs the command: reads its typed arguments, if it has any, and calls
    /// its handler with them.
    pub run: Handler,
}

/// What a command does when the output is a vector or a matrix (or a
/// number of the tensor graph): the command table's column `tensors`. A
/// command not yet written for tensors says so in its row, with what works
/// instead; there is no second list of commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TensorCommand {
    /// Its handler serves a tensor output as a number's, and it takes a
    /// variable to differentiate by (`:grad`, `:check`): a vector or matrix
    /// named while the output is a number is told how to make its loss the
    /// output.
    Differentiates,
    /// Its handler serves a tensor output as a number's (`:trace`, `:step`,
    /// `:topo`, the pictures, `:vars`, `:descend`, `:help`, …).
    Any,
    /// Not supported for tensors yet: refused, the text saying what works
    /// instead.
    Refused(&'static str),
}
/// What works for a tensor output, said when a command refuses one.
const TENSOR_COMMANDS: &str = "`:grad` gives ∂L/∂W with W's shape, `:trace` and `:step` each tensor op's backward step as its matrix rule, `:check` each element against a central difference, `:topo`, `:svg`, `:dot` and `:html` the tensor graph, `:hessian` its second derivatives; scalar outputs keep every command";

/// Where a command runs: in the session, or carried out by the REPL itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InRepl {
    /// The session runs it, in the REPL as everywhere.
    Session,
    /// The REPL pages its trace a step at a time (`:step`); elsewhere the
    /// session prints the trace.
    Step,
    /// The REPL serves the live page (`:serve`); elsewhere it is refused.
    Serve,
}

/// What the session and the front ends do with a command besides running
/// its handler. Every place that treats some commands apart reads these,
/// never a command's name (`tests/it/architecture.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Traits {
    /// Whether the REPL carries it out itself, and which way.
    pub repl: InRepl,
    /// Finishes its change whole even when Ctrl-C cut an engine walk short
    /// (`:reset`, `:gc`, `:load`, `:quit`, `:descend`): no interrupt check
    /// after it.
    pub whole: bool,
    /// Lists nodes (`:trace`, `:topo`, `:forward`, `:graph`): the derivative
    /// graphs among them are named after the listing.
    pub lists_nodes: bool,
    /// Asks for the gradients (`:grad`, `:backward`, `:trace`, `:check`): a
    /// live page shows the finished backward pass after it.
    pub finishes_pass: bool,
    /// Builds state a saved script must repeat (`:backward`).
    pub saved: bool,
    /// `:help` adds the conventions at kinks after its text (`:grad`).
    pub conventions: bool,
    /// Names that run it when typed alone as a statement and not a variable,
    /// as numbat, fend and qalc read them (`help`; `quit` and `exit`).
    pub bare: &'static [&'static str],
    /// Frees memory (`:gc`, `:reset`): the playground runs it past its memory
    /// limit, so that a full session can always be emptied.
    pub frees_memory: bool,
    /// Reads a script file (`:load`): where the front end cannot open files
    /// by name (the playground), it asks the user to pick one instead.
    pub reads_script: bool,
    /// Checks an answer (`:expect`): `gradcalc --seal` replaces its
    /// expected value by a salted hash (`crate::homework`).
    pub checks_answer: bool,
    /// Moves the leaves named after its first three arguments and nothing
    /// else (`:descend LOSS lr=R steps=N P…`, as its log entry writes it):
    /// a checkpoint of the log keeps the leaves' values in its place
    /// (`session/checkpoint.rs`).
    pub moves_params: bool,
    /// Starts a quiz (`:quiz`, `quiz.rs`): the playground's Quiz button
    /// runs it.
    pub starts_quiz: bool,
}

/// The traits of most commands: run by the session, nothing apart.
pub const PLAIN: Traits = Traits {
    repl: InRepl::Session,
    whole: false,
    lists_nodes: false,
    finishes_pass: false,
    saved: false,
    conventions: false,
    bare: &[],
    frees_memory: false,
    reads_script: false,
    checks_answer: false,
    moves_params: false,
    starts_quiz: false,
};

/// The traits of `:gc` and `:reset`: they free nodes, and finish whole
/// after Ctrl-C.
const FREES_MEMORY: Traits = Traits {
    whole: true,
    frees_memory: true,
    ..PLAIN
};

/// The command a name typed alone runs (`help`, `quit`, `exit`), if any.
pub fn find_bare(name: &str) -> Option<&'static CommandSpec> {
    COMMANDS.iter().find(|c| c.traits.bare.contains(&name))
}

/// Every command, in the order `:help` lists them.
pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "grad",
        aliases: &[],
        usage: "[NAMES]",
        help: "∂output/∂name for the names given, or for every variable the output depends on",
        params: &[optional(Arg::Names)],
        writes: false,
        traits: Traits {
            finishes_pass: true,
            conventions: true,
            ..PLAIN
        },
        takes: "takes variable names",
        example: "e.g. `:grad x y`",
        tensors: TensorCommand::Differentiates,
        run: |s, c, e| s.grad(c.name.span, &c.names(), e),
    },
    CommandSpec {
        name: "backward",
        aliases: &[],
        usage: "NAME",
        help: "make NAME the output and print all its gradients",
        params: &[required(Arg::Name)],
        writes: false,
        traits: Traits {
            finishes_pass: true,
            saved: true,
            ..PLAIN
        },
        takes: "takes one name",
        example: "e.g. `:backward z`",
        tensors: TensorCommand::Any,
        run: |s, c, e| s.backward(c, e),
    },
    CommandSpec {
        name: "topo",
        aliases: &["order"],
        usage: "[kahn|naive] [all]",
        help: "the reverse topological order backprop walks (alias `:order`); `kahn`: the order PyTorch's engine runs (dependency counts; a ready leaf first, else the node created last); `naive`: backprop in a naive recursion's order, the wrong gradients it gets beside the right ones (why backprop sorts)",
        params: &[optional(Arg::Keyword(&["kahn", "naive"])), ALL],
        writes: false,
        traits: Traits {
            lists_nodes: true,
            ..PLAIN
        },
        takes: "takes `all` and one of `kahn`, `naive`",
        example: "e.g. `:topo`, `:topo kahn`, `:topo naive`, `:topo all`",
        tensors: TensorCommand::Any,
        run: |s, c, e| s.topo_command(c, e),
    },
    CommandSpec {
        name: "trace",
        aliases: &[],
        usage: "[all|md|tex] [--expand | --expand=CALL]",
        help: "backprop step by step: upstream gradient, local derivatives, products, accumulation; a call of a user function is one step (its inputs, value, gradient), `--expand` shows every call's steps, `--expand=h1` those of call h1 (repeat for more); `:trace md [FILE]`, `:trace tex [FILE]`: a table for notes",
        params: TRACE_PARAMS,
        writes: true,
        traits: Traits {
            lists_nodes: true,
            finishes_pass: true,
            ..PLAIN
        },
        takes: TRACE_TAKES,
        example: TRACE_EXAMPLE,
        tensors: TensorCommand::Any,
        run: |s, c, e| s.trace_command(c, e),
    },
    CommandSpec {
        name: "forward",
        aliases: &[],
        usage: "[all]",
        help: "the forward evaluation order with values, inputs first",
        params: &[ALL],
        writes: false,
        traits: Traits {
            lists_nodes: true,
            ..PLAIN
        },
        takes: "takes no arguments or `all`",
        example: "e.g. `:forward all` to list every node",
        tensors: TensorCommand::Refused(TENSOR_COMMANDS),
        run: |s, c, e| {
            let all = ForwardArgs::parse(c).all;
            s.order_listing(c.name.span, OrderListing::Forward, all, e)
        },
    },
    CommandSpec {
        name: "graph",
        aliases: &[],
        usage: "",
        help: "the output's graph as a tree: name, op, value, gradient; shared nodes drawn once",
        params: &[],
        writes: false,
        traits: Traits {
            lists_nodes: true,
            ..PLAIN
        },
        takes: "takes no arguments",
        example: "",
        tensors: TensorCommand::Refused(TENSOR_COMMANDS),
        run: |s, c, e| s.graph_tree(c.name.span, e),
    },
    CommandSpec {
        name: "dot",
        aliases: &[],
        usage: "[FILE] [--before | --step K | --steps] [--expand | --expand=CALL] [--lr | --tb | --fit WxH]",
        help: "the graph as Graphviz DOT: {name | value | grad} records, op nodes, edges labelled with local derivatives; the flags as for `:svg` (`--steps`: FILE is a directory)",
        params: PICTURE_PARAMS[0],
        writes: true,
        traits: PLAIN,
        takes: "takes at most one file name and at most one of `--before`, `--step K`, `--steps`",
        example: "e.g. `:dot graph.dot`, `:dot --step 3`, `:dot slides --steps`, or `:dot` to print the DOT text",
        tensors: TensorCommand::Any,
        run: |s, c, e| s.picture(c.name, &PictureArgs::parse(c)?, PictureFormat::Dot, e),
    },
    CommandSpec {
        name: "svg",
        aliases: &[],
        usage: "FILE [--before | --step K | --steps] [--expand | --expand=CALL] [--lr | --tb | --fit WxH]",
        help: "the same picture as SVG for slides, laid out without Graphviz; `--before`: values only; `--step K`: after step K of `:trace`; `--steps`: FILE is a directory, one picture per step (step-000 before the pass); `--expand`: each call of a user function node by node (one box a call otherwise), `--expand=h1` call h1 only (repeat for more); `--lr`/`--tb`: left to right or top to bottom; `--fit 1920x1080`: the direction, a long chain wrapped into rows or columns, that a screen of that size shows largest",
        params: PICTURE_PARAMS[1],
        writes: true,
        traits: PLAIN,
        takes: "takes one file name and at most one of `--before`, `--step K`, `--steps`",
        example: "e.g. `:svg graph.svg`, `:svg before.svg --before`, `:svg step3.svg --step 3`, `:svg slides --steps`",
        tensors: TensorCommand::Any,
        run: |s, c, e| s.picture(c.name, &PictureArgs::parse(c)?, PictureFormat::Svg, e),
    },
    CommandSpec {
        name: "html",
        aliases: &[],
        usage: "FILE",
        help: "one self-contained web page: the graph with values and gradients, and the backward pass stepped with the keyboard (→ and ←), zoom, a projector theme; opens from file://",
        params: &[required(Arg::File)],
        writes: true,
        traits: PLAIN,
        takes: "takes one file name",
        example: "e.g. `:html graph.html`",
        tensors: TensorCommand::Any,
        run: |s, c, e| s.html(c.name, c.optional_target(), e),
    },
    CommandSpec {
        name: "serve",
        aliases: &[],
        usage: "[PORT|stop]",
        help: "show the page of `:html` live at http://127.0.0.1:PORT/ (8000 unless given), updated after every statement; read-only, this computer only; `:serve stop` stops it (REPL only)",
        params: &[optional(Arg::Keyword(&["stop"])), optional(Arg::Port)],
        writes: false,
        traits: Traits {
            repl: InRepl::Serve,
            ..PLAIN
        },
        takes: "takes a port number or `stop`",
        example: "e.g. `:serve`, `:serve 8080`, `:serve stop`",
        // The REPL serves the page itself (`web/serve.rs`); elsewhere there
        // is no session left running to show.
        tensors: TensorCommand::Any,
        run: |_, c, _| {
            Err(SessionError::BadArguments {
                message: "`:serve` works in the interactive REPL: a script ends, and the page with it"
                    .to_string(),
                span: c.name.span,
                help: Some("write the page once with `:html FILE`, or start `gradcalc` and type `:serve` there".to_string()),
            })
        },
    },
    CommandSpec {
        name: "check",
        aliases: &[],
        usage: "[NAMES]",
        help: "gradient check: reverse mode against a central difference, within |difference| ≤ atol + rtol·|numeric| (as torch.autograd.gradcheck); pass, warn, FAIL or kink; without names, the leaves the output depends on",
        params: &[optional(Arg::Names)],
        writes: false,
        traits: Traits {
            finishes_pass: true,
            ..PLAIN
        },
        takes: "takes variable names",
        example: "e.g. `:check x y`",
        tensors: TensorCommand::Differentiates,
        run: |s, c, e| s.check(c, e),
    },
    CommandSpec {
        name: "paths",
        aliases: &[],
        usage: "NAME",
        help: "every path from the output to NAME with its product of local derivatives; they sum to the gradient",
        params: &[required(Arg::Name)],
        writes: false,
        traits: PLAIN,
        takes: "takes one name",
        example: "e.g. `:paths b`",
        tensors: TensorCommand::Refused(TENSOR_COMMANDS),
        run: |s, c, e| s.paths(c.name.span, c.names[0], e),
    },
    CommandSpec {
        name: "plot",
        aliases: &[],
        usage: "NAME [FROM TO]",
        help: "the output as a function of NAME (a leaf it depends on: it is moved and the output recomputed), with its derivative, in the terminal; `:plot x -3 3 FILE.svg` writes SVG",
        params: &[
            required(Arg::Name),
            optional(Arg::Range),
            optional(Arg::File),
        ],
        writes: true,
        traits: PLAIN,
        takes: "takes a variable, a range and a file name",
        example: "e.g. `:plot x`, `:plot x -3 3`, `:plot x -3 3 plot.svg`",
        tensors: TensorCommand::Refused(TENSOR_COMMANDS),
        run: Session::plot,
    },
    CommandSpec {
        name: "step",
        aliases: &[],
        usage: "[all|md|tex] [FILE] [--expand | --expand=CALL]",
        help: "backprop one step at a time, as `:trace` shows it, a call of a user function one step unless `--expand`; the page's keys: → or Space (or Enter) the next step, ← or Backspace back, Home the first step, End the last, `g N` (or `N`) and Enter step N, q or Esc (or Ctrl-C) ends; stepping on from the last step ends the walk, saying so (in scripts, pipes and --json it prints what `:trace` prints)",
        params: TRACE_PARAMS,
        writes: true,
        traits: Traits {
            repl: InRepl::Step,
            ..PLAIN
        },
        takes: TRACE_TAKES,
        example: "e.g. `:step`, `:step all`",
        tensors: TensorCommand::Any,
        run: |s, c, e| s.trace_command(c, e),
    },
    CommandSpec {
        name: "seed",
        aliases: &[],
        usage: "N",
        help: "start `randn`'s generator again from seed N (a whole number), so that the same statements give the same numbers on every machine; a session starts from seed 0",
        params: &[required(Arg::Whole)],
        writes: false,
        traits: PLAIN,
        takes: "takes a whole number from 0 to 18446744073709551615",
        example: "e.g. `:seed 42`",
        tensors: TensorCommand::Any,
        run: |s, c, e| {
            let seed = c.names[0].name.parse::<u64>().map_err(|_| c.misuse())?;
            s.seed(seed);
            let _ = e;
            Ok(())
        },
    },
    CommandSpec {
        name: "precision",
        aliases: &[],
        usage: "N|full",
        help: "show N significant digits (1 to 17) from now on, or `full` for the shortest text that reads back exactly; JSON always has full precision",
        params: &[required(Arg::Digits)],
        writes: false,
        traits: PLAIN,
        takes: "takes a number of digits from 1 to 17, or `full`",
        example: "e.g. `:precision 4`, `:precision full`",
        tensors: TensorCommand::Any,
        run: |_, c, e| {
            let word = c.names[0].name.as_str();
            let digits = match word.parse::<usize>() {
                _ if word == "full" => None,
                Ok(digits) if (1..=MAX_DIGITS).contains(&digits) => Some(digits),
                _ => return Err(c.misuse()),
            };
            e.push(Event::Precision { digits });
            Ok(())
        },
    },
    CommandSpec {
        name: "vars",
        aliases: &[],
        usage: "[--shapes]",
        help: "the variables with their values and gradients, then the functions you defined; `--shapes`: each variable's name and shape only (`()` for a number)",
        params: &[optional(Arg::Keyword(&["--shapes"]))],
        writes: false,
        traits: PLAIN,
        takes: "takes `--shapes` or nothing",
        example: "e.g. `:vars --shapes`",
        tensors: TensorCommand::Any,
        run: |s, c, e| {
            if c.keywords.contains(&"--shapes") {
                s.shapes(e);
            } else {
                s.vars(e);
            }
            Ok(())
        },
    },
    CommandSpec {
        name: "repeat",
        aliases: &[],
        usage: "N [FILE.svg] STATEMENT",
        help: "run a statement N times (Ctrl-C stops): a table of the output and the assigned variables, and a plot of the output over the steps; e.g. `:repeat 50 w := w - 0.1*grad(L, w)`",
        params: &[],
        writes: true,
        traits: PLAIN,
        takes: "takes a count and a statement",
        example: "e.g. `:repeat 50 w := w - 0.1*grad(L, w)`",
        // A statement of the grammar, not a command (its statements hold `;`,
        // `,` and `:=`): `Statement::Repeat`, run by
        // `Session::repeat_statement`. This row is for `:help` and completion;
        // nothing parsed runs it.
        tensors: TensorCommand::Refused(TENSOR_COMMANDS),
        run: |_, c, _| Err(c.misuse()),
    },
    CommandSpec {
        name: "descend",
        aliases: &[],
        usage: "LOSS lr=RATE steps=N [FILE.svg] PARAMS… [--all]",
        help: "gradient descent on LOSS over the leaves PARAMS: each step, one backward pass gives every ∂LOSS/∂param, then all move together by −RATE × gradient; a table from step 0 (`--all`: every parameter's column) and a plot of LOSS (Ctrl-C keeps the steps done), written to FILE.svg when given, as `:repeat N FILE.svg` does; LOSS is the NAME of a variable, PARAMS the NAMES of leaves",
        params: &[
            required(Arg::Name),
            required(Arg::Setting("lr=")),
            required(Arg::Setting("steps=")),
            optional(Arg::File),
            required(Arg::Names),
            optional(Arg::Keyword(&["--all"])),
        ],
        writes: true,
        traits: Traits {
            whole: true,
            moves_params: true,
            ..PLAIN
        },
        takes: "takes a loss, `lr=RATE`, `steps=N`, a file for the plot if wanted, and the parameters",
        example: "e.g. `:descend L lr=0.1 steps=20 w1 w2 b`",
        tensors: TensorCommand::Any,
        run: |s, c, e| s.descend(&super::descent::Descent::parse(c)?, e),
    },
    CommandSpec {
        name: "hessian",
        aliases: &[],
        usage: "[NAMES]",
        help: "the matrix of second derivatives of the output, ∂²output/∂row∂column (symmetric); without names, the variables the output depends on",
        params: &[optional(Arg::Names)],
        writes: false,
        traits: PLAIN,
        takes: "takes variable names",
        example: "e.g. `:hessian x y`",
        tensors: TensorCommand::Any,
        run: |s, c, e| s.hessian(c.name.span, &c.names(), e),
    },
    CommandSpec {
        name: "diff",
        aliases: &[],
        usage: "NAME WRT",
        help: "∂NAME/∂WRT as an expression you can type back: like terms collected, pi, e, ln(2), ln(10) by name; through relu, max, min its pieces and where each holds; a large one with shared parts named once (t1 = …)",
        params: &[required(Arg::Name), required(Arg::Name)],
        writes: false,
        traits: PLAIN,
        takes: "takes two names: the value and the variable",
        example: "e.g. `:diff y x`",
        tensors: TensorCommand::Refused(TENSOR_COMMANDS),
        run: |s, c, e| s.diff(c.name, &c.names(), e),
    },
    CommandSpec {
        name: "help",
        aliases: &[],
        usage: "[TOPIC]",
        help: "this help; `:help tanh` for a function, `:help grad` for the conventions",
        params: &[optional(Arg::Topic)],
        writes: false,
        traits: Traits {
            bare: &["help"],
            ..PLAIN
        },
        takes: "takes one topic",
        example: "e.g. `:help tanh`",
        tensors: TensorCommand::Any,
        run: |s, c, e| {
            e.push(s.help(c.names.first().copied())?);
            Ok(())
        },
    },
    CommandSpec {
        name: "stats",
        aliases: &[],
        usage: "",
        help: "graph size: nodes, reachable nodes, bytes, sorts, the last reclaim",
        params: &[],
        writes: false,
        traits: PLAIN,
        takes: "takes no arguments",
        example: "",
        tensors: TensorCommand::Any,
        run: |s, _, e| {
            s.stats_command(e);
            Ok(())
        },
    },
    CommandSpec {
        name: "gc",
        aliases: &[],
        usage: "",
        help: "reclaim the nodes no name, output or `ans` can reach",
        params: &[],
        writes: false,
        traits: FREES_MEMORY,
        takes: "takes no arguments",
        example: "",
        tensors: TensorCommand::Any,
        run: |s, _, e| {
            s.gc_command(e);
            Ok(())
        },
    },
    CommandSpec {
        name: "reset",
        aliases: &[],
        usage: "",
        help: "forget all variables, functions and the graph",
        params: &[],
        writes: false,
        traits: FREES_MEMORY,
        takes: "takes no arguments",
        example: "",
        tensors: TensorCommand::Any,
        run: |s, _, e| {
            s.reset();
            e.push(Event::Reset);
            Ok(())
        },
    },
    CommandSpec {
        name: "save",
        aliases: &[],
        usage: "FILE",
        help: "write the session's statements to FILE as a script (`-f` replaces an existing FILE)",
        params: &[required(Arg::File)],
        writes: true,
        traits: PLAIN,
        takes: "takes one file name",
        example: "e.g. `:save lesson.calc`, or `:save \"my lesson.calc\"` for a name with spaces",
        tensors: TensorCommand::Any,
        run: |s, c, e| {
            if s.statements_dropped() > 0 {
                e.push(Event::Warning {
                    message: format!(
                        "the script holds the last {} statements only: the first {} were dropped to bound memory, so it does not rebuild this session from its start",
                        s.statement_count(),
                        s.statements_dropped()
                    ),
                    span: c.name.span,
                });
            }
            e.push(Event::Save {
                script: s.script(),
                statements: s.statement_count(),
                target: c.target(),
            });
            Ok(())
        },
    },
    CommandSpec {
        name: "load",
        aliases: &[],
        usage: "FILE",
        help: "run the script FILE into this session (it may `:load` others)",
        params: &[required(Arg::File)],
        writes: false,
        traits: Traits {
            whole: true,
            reads_script: true,
            ..PLAIN
        },
        takes: "takes one file name",
        example: "e.g. `:load lesson.calc`, or `:load \"my lesson.calc\"` for a name with spaces",
        tensors: TensorCommand::Any,
        run: |_, c, e| {
            e.push(Event::Load { target: c.target() });
            Ok(())
        },
    },
    CommandSpec {
        name: "expect",
        aliases: &[],
        usage: "QUANTITY [= VALUE] [tol=T]",
        help: "check an answer: QUANTITY (a variable, a gradient `∂L/∂W1` or `dL/dW1`, any expression) against VALUE within T (1e-6 if not given), or against the salted hash `gradcalc --seal` wrote in its place (`sealed=…`); says correct, off by N % (with VALUE), wrong (sealed), wrong shape, or not answered yet (docs/homework.md)",
        params: &[required(Arg::Text)],
        writes: false,
        traits: Traits {
            checks_answer: true,
            ..PLAIN
        },
        takes: "takes what to check and its expected value",
        example: "e.g. `:expect ∂L/∂w = 0.5 tol=1e-6`",
        tensors: TensorCommand::Any,
        run: |s, c, e| s.expect_command(c, e),
    },
    CommandSpec {
        name: "quiz",
        aliases: &[],
        usage: "[NAME] [steps=A-B] [rtol=R]",
        help: "practise the backward pass: walks `:trace`'s steps of the output (or of NAME, made the output) in reverse topological order and asks before each is shown: which node is next, each local derivative (a number or a formula, evaluated here), upstream × local, the gradient after accumulation at a fan-out; for a tensor op the shape of what each operand receives, then its numbers (`upstream` in an answer is the step's upstream). Each following statement is an answer: `?` shows it, `b` goes back, `q` stops (the score so far); a `:` command ends the quiz. Numbers are right within rtol·|expected| + 1e-6 (rtol 1e-3 unless given); `steps=1-8` asks about steps 1 to 8 only",
        params: &[
            optional(Arg::Name),
            optional(Arg::Setting("steps=")),
            optional(Arg::Setting("rtol=")),
        ],
        writes: false,
        traits: Traits {
            starts_quiz: true,
            ..PLAIN
        },
        takes: "takes a name, `steps=A-B` and `rtol=R`",
        example: "e.g. `:quiz`, `:quiz L steps=1-8`",
        tensors: TensorCommand::Any,
        run: |s, c, e| s.quiz_command(c, e),
    },
    CommandSpec {
        name: "quit",
        aliases: &["exit", "q"],
        usage: "",
        help: "leave gradcalc (also Ctrl-D)",
        params: &[],
        writes: false,
        traits: Traits {
            whole: true,
            bare: &["quit", "exit"],
            ..PLAIN
        },
        takes: "takes no arguments",
        example: "",
        tensors: TensorCommand::Any,
        run: |_, _, e| {
            e.push(Event::Quit);
            Ok(())
        },
    },
];

/// The most significant digits `:precision` takes: 17 always read back as the
/// same f64 (IEEE 754, §5.12.2).
pub const MAX_DIGITS: usize = 17;

const TRACE_PARAMS: &[Param] = &[
    ALL,
    optional(Arg::Keyword(&["md", "markdown", "tex", "latex"])),
    optional(Arg::Keyword(&["--expand"])),
    optional(Arg::Setting(super::boxes::EXPAND_SETTING)),
    optional(Arg::File),
];
/// The parameters of `:dot` (an optional file) and `:svg` (a file): the moment
/// of the backward pass to draw.
const PICTURE_PARAMS: [&[Param]; 2] = [
    &[
        optional(Arg::File),
        optional(Arg::Keyword(&["--before", "--steps"])),
        optional(Arg::Numbered("--step")),
        optional(Arg::Keyword(&["--expand"])),
        optional(Arg::Setting(super::boxes::EXPAND_SETTING)),
        optional(Arg::Keyword(&["--lr", "--tb"])),
        optional(Arg::Numbered(super::args::FIT_FLAG)),
    ],
    &[
        required(Arg::File),
        optional(Arg::Keyword(&["--before", "--steps"])),
        optional(Arg::Numbered("--step")),
        optional(Arg::Keyword(&["--expand"])),
        optional(Arg::Setting(super::boxes::EXPAND_SETTING)),
        optional(Arg::Keyword(&["--lr", "--tb"])),
        optional(Arg::Numbered(super::args::FIT_FLAG)),
    ],
];
const TRACE_TAKES: &str = "takes `all`, then `md` or `tex` and a file name";
const TRACE_EXAMPLE: &str = "e.g. `:trace md`, `:trace tex notes.tex`, `:trace all`";

/// `-f` / `--force` among a file-writing command's arguments.
const FORCE_FLAGS: [&str; 2] = ["-f", "--force"];

/// The row of a command by its name or an alias.
pub fn find(name: &str) -> Option<&'static CommandSpec> {
    COMMANDS
        .iter()
        .find(|c| c.name == name || c.aliases.contains(&name))
}

/// Every name and alias, for suggestions.
pub fn all_names() -> impl Iterator<Item = &'static str> {
    COMMANDS
        .iter()
        .flat_map(|c| std::iter::once(c.name).chain(c.aliases.iter().copied()))
}

/// A command line parsed against its row of the table.
pub struct Command<'a> {
    /// The row.
    pub spec: &'static CommandSpec,
    /// The name as typed (`order` for `:topo`'s alias), with its span.
    pub name: &'a Ident,
    /// The arguments as typed, without `-f`.
    pub args: Vec<&'a Ident>,
    /// The variable names, the help topic or `:precision`'s digits, in order.
    pub names: Vec<&'a Ident>,
    /// The keywords given (`all`, `kahn`, `md`, …).
    pub keywords: Vec<&'static str>,
    /// The two ends of a range, as typed.
    pub range: Option<(&'a Ident, &'a Ident)>,
    /// The numbered flags given, with the word after each (`--step 3`).
    pub numbered: Vec<(&'static str, &'a Ident)>,
    /// The settings given (`lr=0.5`): the key with its `=`, and the word.
    pub settings: Vec<(&'static str, &'a Ident)>,
    /// The file argument.
    pub file: Option<&'a Ident>,
    /// `-f` / `--force` was given.
    pub force: bool,
}

impl<'a> Command<'a> {
    /// Parses `:name args` against the table.
    ///
    /// Errors: [`SessionError::UnknownCommand`] (with the nearest name) and
    /// [`SessionError::BadArguments`] saying what the command takes.
    pub fn parse(name: &'a Ident, args: &'a [Ident]) -> Result<Command<'a>, SessionError> {
        let Some(spec) = find(&name.name) else {
            return Err(SessionError::UnknownCommand {
                name: name.name.clone(),
                span: name.span,
                suggestion: nearest(&name.name, all_names()),
            });
        };
        let mut command = Command {
            spec,
            name,
            args: Vec::new(),
            names: Vec::new(),
            keywords: Vec::new(),
            range: None,
            numbered: Vec::new(),
            settings: Vec::new(),
            file: None,
            force: false,
        };
        let positional = command.read_words(args)?;
        command.place(positional)?;
        Ok(command)
    }

    /// Reads the words after the command's name: flags, numbered flags with
    /// their number, settings and keywords go into their fields, every word
    /// into `args`; the positional words are handed back in order.
    ///
    /// Errors: [`SessionError::BadArguments`] for a numbered flag without
    /// its number, a setting or flag given twice, or an unknown flag.
    fn read_words(&mut self, args: &'a [Ident]) -> Result<Vec<&'a Ident>, SessionError> {
        let spec = self.spec;
        let mut positional = Vec::new();
        let mut words = args.iter();
        while let Some(arg) = words.next() {
            if spec.writes && FORCE_FLAGS.contains(&arg.name.as_str()) {
                self.force = true;
                continue;
            }
            self.args.push(arg);
            let given: Vec<&str> = self.numbered.iter().map(|n| n.0).collect();
            if let Some(flag) = numbered(spec, &given, &arg.name) {
                let Some(number) = words.next() else {
                    return Err(SessionError::BadArguments {
                        message: format!("`{flag}` takes a number after it"),
                        span: arg.span,
                        help: Some(self.example()),
                    });
                };
                self.args.push(number);
                self.numbered.push((flag, number));
                continue;
            }
            if let Some(key) = setting(spec, &arg.name) {
                // A flag's setting may be given again (`--expand=h1
                // --expand=h2`: a comma would end the word); `lr=` may not.
                if !key.starts_with("--") && self.settings.iter().any(|(given, _)| *given == key) {
                    return Err(self.misuse());
                }
                self.settings.push((key, arg));
                continue;
            }
            match keyword(spec, &self.keywords, &arg.name) {
                Some(word) => self.keywords.push(word),
                // A flag the row has, again or beside another of its group.
                None if flags(spec).contains(&arg.name.as_str()) => {
                    return Err(self.flag_clash(arg));
                }
                None if arg.name.starts_with("--") && !flags(spec).is_empty() => {
                    return Err(self.unknown_flag(arg));
                }
                None => positional.push(arg),
            }
        }
        Ok(positional)
    }

    /// Hands the `positional` words to the row's parameters in order (the
    /// optional ones take what is left over after the required ones, the
    /// names all of it).
    ///
    /// Errors: [`SessionError::BadArguments`] when words are missing or
    /// left over, a required setting is not given, or a name is not
    /// name-shaped.
    fn place(&mut self, positional: Vec<&'a Ident>) -> Result<(), SessionError> {
        let spec = self.spec;
        let required: usize = spec
            .params
            .iter()
            .filter(|p| !p.optional)
            .map(|p| width(p.arg))
            .sum();
        let Some(mut extra) = positional.len().checked_sub(required) else {
            return Err(self.misuse());
        };
        let missing = spec.params.iter().find_map(|p| match p.arg {
            Arg::Setting(key) if !p.optional && !self.settings.iter().any(|(k, _)| *k == key) => {
                Some(key)
            }
            _ => None,
        });
        if let Some(key) = missing {
            let span = self.args.iter().fold(self.name.span, |s, a| s.to(a.span));
            // `lr = 0.5`: the setting typed with spaces around its `=`.
            let bare = key.trim_end_matches('=');
            let spaced = self
                .args
                .windows(2)
                .find(|w| w[0].name == bare && w[1].name.starts_with('='));
            if let Some(words) = spaced {
                let value = self
                    .args
                    .iter()
                    .skip_while(|a| a.span != words[1].span)
                    .map(|a| a.name.trim_start_matches('='))
                    .find(|v| !v.is_empty())
                    .unwrap_or("…");
                return Err(SessionError::BadArguments {
                    message: format!(
                        "`{key}` is written without spaces around its `=`: `{key}{value}`"
                    ),
                    span: words[0].span.to(words[1].span),
                    help: Some(self.example()),
                });
            }
            return Err(SessionError::BadArguments {
                message: format!("`:{}` needs `{key}…`", self.name.name),
                span,
                help: Some(self.example()),
            });
        }
        let mut rest = positional.into_iter();
        for param in spec.params {
            let take = match (param.arg, param.optional) {
                (Arg::Keyword(_) | Arg::Numbered(_) | Arg::Setting(_), _) => continue,
                (Arg::Names | Arg::Text, _) => {
                    let all = extra;
                    extra = 0;
                    all
                }
                (arg, false) => width(arg),
                // A file before the names (`:descend … loss.svg w1 b`): only
                // a word that names a file.
                (Arg::File, true) if spec.params.iter().any(|p| p.arg == Arg::Names) => {
                    match rest.clone().next() {
                        Some(word) if extra > 0 && file_shaped(&word.name) => {
                            extra -= 1;
                            1
                        }
                        _ => continue,
                    }
                }
                (arg, true) if extra >= width(arg) => {
                    extra -= width(arg);
                    width(arg)
                }
                (_, true) => continue,
            };
            let taken: Vec<&Ident> = rest.by_ref().take(take).collect();
            if matches!(param.arg, Arg::Name | Arg::Names)
                && let Some(word) = taken.iter().find(|word| !name_shaped(&word.name))
            {
                return Err(self.not_a_name(word, param.arg));
            }
            match param.arg {
                Arg::Name
                | Arg::Names
                | Arg::Text
                | Arg::Topic
                | Arg::Digits
                | Arg::Port
                | Arg::Whole => self.names.extend(taken),
                Arg::File => self.file = taken.first().copied(),
                Arg::Range => self.range = Some((taken[0], taken[1])),
                Arg::Keyword(_) | Arg::Numbered(_) | Arg::Setting(_) => {}
            }
        }
        if rest.next().is_some() {
            return Err(self.misuse());
        }
        Ok(())
    }

    /// The word after the numbered flag `flag`, if it was given (`3` of `--step 3`).
    pub fn number_after(&self, flag: &str) -> Option<&'a Ident> {
        self.numbered
            .iter()
            .find(|(given, _)| *given == flag)
            .map(|&(_, number)| number)
    }

    /// The names given, as owned identifiers.
    pub fn names(&self) -> Vec<Ident> {
        self.names.iter().map(|&n| n.clone()).collect()
    }

    /// The file argument as a target (with `-f`, and the command as it would be
    /// typed with `-f` for the error when the file exists); callers ask only
    /// where the row requires a file.
    pub fn target(&self) -> Target {
        let mut target = self
            .file
            .map(Target::from_word)
            .unwrap_or_else(|| Target::from_word(self.name));
        target.force = self.force;
        target.forced = format!(":{}", self.name.name);
        for &arg in &self.args {
            if self.file.is_some_and(|file| file.span == arg.span) {
                target.forced.push_str(" -f");
            }
            target.forced.push(' ');
            target.forced.push_str(&arg.name);
        }
        target
    }

    /// The file argument as a target, if one was given.
    pub fn optional_target(&self) -> Option<Target> {
        self.file.map(|_| self.target())
    }

    /// The error for a wrong use: what the command takes, and an example.
    pub fn misuse(&self) -> SessionError {
        let typed = &self.name.name;
        let span = self.args.iter().fold(self.name.span, |s, a| s.to(a.span));
        // `--expand=W @ x`: an expression where one node's name goes.
        let expanded = self
            .args
            .iter()
            .position(|a| a.name.starts_with("--expand="));
        if let Some(at) = expanded
            && at + 1 < self.args.len()
            && !self.args[at + 1].name.starts_with('-')
        {
            let words: Vec<&str> = self.args[at..].iter().map(|a| a.name.as_str()).collect();
            let expression = words.join(" ");
            let expression = expression.trim_start_matches("--expand=");
            return SessionError::BadArguments {
                message: format!(
                    "`--expand=` takes one node's name, without spaces, not `{expression}`"
                ),
                span: self.args[at].span.to(self.args[self.args.len() - 1].span),
                help: Some(format!(
                    "name it where the output is built (`z = {expression}`, then the output from `z`), then `:{typed} --expand=z`"
                )),
            };
        }
        SessionError::BadArguments {
            message: format!("`:{typed}` {}", self.spec.takes),
            span,
            help: Some(self.example()),
        }
    }

    /// The error for a flag given again, or beside another of its group
    /// (`--lr` after `--tb`): at the flag, naming the one it clashes with.
    fn flag_clash(&self, arg: &Ident) -> SessionError {
        let earlier = self.spec.params.iter().find_map(|p| match p.arg {
            Arg::Keyword(words) if words.contains(&arg.name.as_str()) => {
                self.keywords.iter().find(|k| words.contains(k))
            }
            _ => None,
        });
        let message = match earlier {
            Some(&first) if first != arg.name => {
                format!(
                    "`{first}` and `{}` cannot go together: give one of them",
                    arg.name
                )
            }
            _ => format!("`{}` is given twice", arg.name),
        };
        SessionError::BadArguments {
            message,
            span: arg.span,
            help: Some(self.example()),
        }
    }

    /// The error for a word where a variable's name goes that cannot be one
    /// (`:grad 3`, `:backward x+y`): "assign it first" would be no fix.
    fn not_a_name(&self, word: &Ident, arg: Arg) -> SessionError {
        let names = self
            .spec
            .params
            .iter()
            .filter(|p| matches!(p.arg, Arg::Name | Arg::Names))
            .count();
        let takes = if arg == Arg::Names || names > 1 {
            "names"
        } else {
            "a name"
        };
        SessionError::BadArguments {
            message: format!(
                "`{}` is not a variable name: `:{}` takes {takes}",
                word.name, self.name.name
            ),
            span: word.span,
            help: Some(self.example()),
        }
    }

    /// The row's example, or "type just `:name`".
    fn example(&self) -> String {
        match self.spec.example {
            "" => format!("type just `:{}`", self.name.name),
            example => example.to_string(),
        }
    }

    /// The error for a `--word` the row does not know: the flags it knows.
    fn unknown_flag(&self, word: &Ident) -> SessionError {
        let known: Vec<String> = flags(self.spec).iter().map(|f| format!("`{f}`")).collect();
        SessionError::BadArguments {
            message: format!(
                "`:{}` knows {}, not `{}`",
                self.name.name,
                known.join(", "),
                word.name
            ),
            span: word.span,
            help: Some(self.example()),
        }
    }
}

/// Whether `word` has the shape of a name (a letter or `_`, then name
/// characters, parts joined by `.`): what a variable or a node's label (`_7`,
/// `h3.relu`) can be.
fn name_shaped(word: &str) -> bool {
    crate::syntax::is_name(word)
}

/// Whether `word` can only be a file among names (a node label such as
/// `h1.add` has a dot too): standard output `-`, a quoted name, a path, or
/// a picture's extension.
fn file_shaped(word: &str) -> bool {
    const EXTENSIONS: [&str; 6] = [".svg", ".png", ".pdf", ".jpg", ".jpeg", ".gif"];
    word == "-"
        || word.starts_with('"')
        || word.contains('/')
        || EXTENSIONS
            .iter()
            .any(|e| word.to_ascii_lowercase().ends_with(e))
}

/// The keyword of `spec` that `word` is, if it is one not given yet.
fn keyword(spec: &CommandSpec, given: &[&str], word: &str) -> Option<&'static str> {
    spec.params.iter().find_map(|p| match p.arg {
        Arg::Keyword(words) if !words.iter().any(|w| given.contains(w)) => {
            words.iter().copied().find(|w| *w == word)
        }
        _ => None,
    })
}

/// The numbered flag of `spec` that `word` is, if it is one not in `given`.
fn numbered(spec: &CommandSpec, given: &[&str], word: &str) -> Option<&'static str> {
    spec.params.iter().find_map(|p| match p.arg {
        Arg::Numbered(flag) if flag == word && !given.contains(&flag) => Some(flag),
        _ => None,
    })
}

/// The setting of `spec` that `word` gives a value to (`lr=0.5` for `lr=`).
fn setting(spec: &CommandSpec, word: &str) -> Option<&'static str> {
    spec.params.iter().find_map(|p| match p.arg {
        Arg::Setting(key) if word.starts_with(key) => Some(key),
        _ => None,
    })
}

/// The words of `spec`'s keywords and numbered flags that start with `--`.
fn flags(spec: &CommandSpec) -> Vec<&'static str> {
    spec.params
        .iter()
        .flat_map(|p| match p.arg {
            Arg::Keyword(words) => words.to_vec(),
            Arg::Numbered(flag) => vec![flag],
            _ => Vec::new(),
        })
        .filter(|w| w.starts_with("--"))
        .collect()
}

/// How many words an argument takes.
fn width(arg: Arg) -> usize {
    match arg {
        Arg::Range => 2,
        Arg::Names | Arg::Text | Arg::Setting(_) => 0,
        Arg::Name
        | Arg::File
        | Arg::Topic
        | Arg::Digits
        | Arg::Port
        | Arg::Whole
        | Arg::Keyword(_)
        | Arg::Numbered(_) => 1,
    }
}

/// What the next word of a command line can be, given the complete words typed
/// after the command's name: the keywords and numbered flags not given yet and
/// the kinds of the arguments that can come next (for completion); nothing
/// right after a numbered flag, where a number goes.
pub fn next_args(spec: &CommandSpec, typed: &[&str]) -> Vec<Arg> {
    let mut given = Vec::new();
    let mut given_numbered: Vec<&str> = Vec::new();
    let mut count = 0;
    let mut words = typed.iter();
    while let Some(word) = words.next() {
        if spec.writes && FORCE_FLAGS.contains(word) {
            continue;
        }
        if let Some(key) = setting(spec, word) {
            given_numbered.push(key);
            continue;
        }
        if let Some(flag) = numbered(spec, &given_numbered, word) {
            given_numbered.push(flag);
            if words.next().is_none() {
                return Vec::new();
            }
            continue;
        }
        match keyword(spec, &given, word) {
            Some(word) => given.push(word),
            None => count += 1,
        }
    }
    let mut next = Vec::new();
    // The positions at which the next positional parameter may start.
    let mut starts = vec![0usize];
    for param in spec.params {
        match param.arg {
            Arg::Keyword(words) => {
                if !words.iter().any(|w| given.contains(w)) {
                    next.push(param.arg);
                }
                continue;
            }
            Arg::Numbered(flag) | Arg::Setting(flag) => {
                if !given_numbered.contains(&flag) {
                    next.push(param.arg);
                }
                continue;
            }
            Arg::Names | Arg::Text if starts.iter().any(|&s| s <= count) => next.push(param.arg),
            arg if starts.iter().any(|&s| s <= count && count < s + width(arg)) => next.push(arg),
            _ => {}
        }
        let moved: Vec<usize> = starts.iter().map(|s| s + width(param.arg)).collect();
        if !param.optional {
            starts.clear();
        }
        starts.extend(moved);
    }
    next
}

impl Session {
    /// Runs one command: parses it against the table and calls its handler;
    /// `-f` marks the targets of the events it returns.
    pub(super) fn command(
        &mut self,
        name: &Ident,
        args: &[Ident],
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let command = Command::parse(name, args)?;
        let first = events.len();
        if let TensorCommand::Refused(help) = command.spec.tensors
            && let Some(output) = self.shaped_output()
        {
            return Err(super::tensors::tensor_error(
                super::ErrorCode::Unsupported,
                name.span,
                format!(
                    "`:{}` of a tensor output ({}) is not supported yet",
                    command.spec.name, output.label
                ),
                Some(help.into()),
            ));
        }
        (command.spec.run)(self, &command, events)
            .map_err(|error| self.refuse_named_tensor(command.spec, error))?;
        // A command's results may rest on an engine walk that Ctrl-C cut short;
        // those that change the session finish their change whole (`:descend`
        // keeps the steps it finished and says so).
        if !command.spec.traits.whole {
            self.check_interrupt()?;
        }
        if command.spec.traits.lists_nodes && events.len() > first {
            // Say which of the nodes shown are derivative graphs (`grad(y, x)`).
            self.derivative_notes(events);
        }
        if command.force {
            for event in &mut events[first..] {
                if let Some(target) = event.target_mut() {
                    target.force = true;
                }
            }
        }
        Ok(())
    }
}

impl Session {
    /// A scalar command's "unknown name" for a name bound to a vector or a
    /// matrix (`:grad W`, `:backward L` while the output is a number): says
    /// what the name is and how a tensor loss becomes the output. Any other
    /// error is returned as it is.
    fn refuse_named_tensor(&self, spec: &CommandSpec, error: SessionError) -> SessionError {
        let SessionError::UnknownName { name, span, .. } = &error else {
            return error;
        };
        if !self.is_tensor(name) {
            return error;
        }
        let command = spec.name;
        let message = format!(
            "`{name}` is a vector or matrix, and the output is a number: `:{command}` here takes the output's scalar variables"
        );
        let help = match spec.tensors {
            TensorCommand::Differentiates => format!(
                "to differentiate a tensor loss, make it the output first: type its name (`L`) or assign it (`L = sum(…)`), then `:{command} {name}`"
            ),
            _ => format!(
                "`:{command}` is not supported for vectors and matrices yet; with a tensor loss as the output, `:grad`, `:trace`, `:check` and the pictures work"
            ),
        };
        super::tensors::tensor_error(super::ErrorCode::Unsupported, *span, message, Some(help))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::Span;

    /// A row's example shows that command, not another (`:load` once
    /// suggested `:save lesson.calc`, `:step` the `:trace` examples).
    #[test]
    fn every_example_is_of_its_own_command() {
        for spec in COMMANDS {
            for shown in spec.example.split('`').skip(1).step_by(2) {
                let Some(word) = shown.strip_prefix(':') else {
                    continue;
                };
                let word = word.split(' ').next().unwrap_or_default();
                assert!(
                    word == spec.name || spec.aliases.contains(&word),
                    ":{}'s example shows `{shown}`",
                    spec.name
                );
            }
        }
    }

    #[test]
    fn every_command_has_help_usage_and_completion() {
        for spec in COMMANDS {
            assert!(!spec.help.is_empty(), ":{} has help", spec.name);
            assert!(!spec.takes.is_empty(), ":{} says what it takes", spec.name);
            // The usage names each argument the table lists.
            for param in spec.params {
                let shown = match param.arg {
                    Arg::Name => "NAME",
                    Arg::Names => "NAMES",
                    Arg::Text => "QUANTITY",
                    Arg::File => "FILE",
                    Arg::Topic => "TOPIC",
                    Arg::Range => "FROM TO",
                    Arg::Digits => "N|full",
                    Arg::Port => "PORT",
                    Arg::Whole => "N",
                    Arg::Keyword(words) => words[0],
                    Arg::Numbered(flag) | Arg::Setting(flag) => flag,
                };
                assert!(
                    spec.usage.contains(shown) || spec.help.contains(shown),
                    ":{} shows {shown}",
                    spec.name
                );
            }
            // Completion offers, before any argument, every kind the row lists first.
            let next = next_args(spec, &[]);
            if let Some(first) = spec.params.first() {
                assert!(
                    next.contains(&first.arg),
                    ":{} completes {first:?}",
                    spec.name
                );
            } else {
                assert!(next.is_empty(), ":{} completes nothing", spec.name);
            }
            assert_eq!(find(spec.name).map(|s| s.name), Some(spec.name));
            for alias in spec.aliases {
                assert_eq!(find(alias).map(|s| s.name), Some(spec.name));
            }
        }
    }

    #[test]
    fn next_arguments_follow_the_table() {
        let plot = find("plot").unwrap();
        assert_eq!(next_args(plot, &[]), [Arg::Name]);
        assert_eq!(next_args(plot, &["x"]), [Arg::Range, Arg::File]);
        assert_eq!(next_args(plot, &["x", "-3"]), [Arg::Range]);
        assert_eq!(next_args(plot, &["x", "-3", "3"]), [Arg::File]);
        let trace = find("trace").unwrap();
        assert_eq!(
            next_args(trace, &["md"]),
            [
                Arg::Keyword(&["all"]),
                Arg::Keyword(&["--expand"]),
                Arg::Setting("--expand="),
                Arg::File
            ]
        );
        assert_eq!(next_args(find("paths").unwrap(), &["x"]), []);
        assert_eq!(next_args(find("load").unwrap(), &[]), [Arg::File]);
        // A numbered flag: a number goes right after it, then the rest.
        let svg = find("svg").unwrap();
        assert_eq!(next_args(svg, &["pic.svg", "--step"]), []);
        assert_eq!(
            next_args(svg, &["pic.svg", "--step", "3"]),
            [
                Arg::Keyword(&["--before", "--steps"]),
                Arg::Keyword(&["--expand"]),
                Arg::Setting("--expand="),
                Arg::Keyword(&["--lr", "--tb"]),
                Arg::Numbered("--fit")
            ]
        );
        assert_eq!(
            next_args(find("dot").unwrap(), &["--step", "3"]),
            [
                Arg::File,
                Arg::Keyword(&["--before", "--steps"]),
                Arg::Keyword(&["--expand"]),
                Arg::Setting("--expand="),
                Arg::Keyword(&["--lr", "--tb"]),
                Arg::Numbered("--fit")
            ]
        );
    }

    #[test]
    fn a_numbered_flag_takes_the_word_after_it_anywhere() {
        let word = |name: &str, start: usize| Ident {
            name: name.to_string(),
            span: Span {
                start,
                end: start + name.len(),
            },
        };
        let name = word("dot", 1);
        let args = [word("--step", 5), word("3", 12), word("out.dot", 14)];
        let command = Command::parse(&name, &args).expect("parses");
        assert_eq!(
            command.number_after("--step").map(|n| n.name.as_str()),
            Some("3")
        );
        assert_eq!(command.file.map(|f| f.name.as_str()), Some("out.dot"));
        assert!(command.keywords.is_empty());
        // Without its number, twice, or beside another of its kind: refused.
        for args in [
            vec![word("--step", 5)],
            vec![word("--step", 5), word("1", 12), word("--step", 14)],
            vec![word("--before", 5), word("--steps", 14)],
            vec![word("--sideways", 5)],
        ] {
            assert!(Command::parse(&name, &args).is_err(), "{args:?}");
        }
    }

    #[test]
    fn help_knows_aliases_and_quit_takes_no_arguments() {
        let mut session = Session::new();
        let events = session.run_statement(":help order", Span { start: 0, end: 11 });
        let Ok(events) = events else {
            panic!("`:help order` is help on `:topo`: {events:?}")
        };
        assert!(
            matches!(&events[..], [Event::Help { text, .. }] if text.starts_with(":topo [kahn|naive] [all]"))
        );
        assert!(
            session
                .run_statement(":quit now", Span { start: 0, end: 9 })
                .is_err()
        );
    }
}
